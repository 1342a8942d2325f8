"""The payout request and the payout object (spec: Payout)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema

from cauri.kit.failures import failure_fields
from cauri.kit.metadata import Metadata
from cauri.kit.money import Amount, to_major
from cauri.kit.phone import PhoneNumber, mask
from cauri.kit.request_body import RequestBody
from cauri.models import Payout
from cauri.operators import catalogue

Text255 = Annotated[str, StringConstraints(max_length=255)]


# Case-insensitive at run time; the document lists the catalogue's Mobile Money codes.
PayoutOperator = Annotated[
    str,
    StringConstraints(min_length=1, max_length=64),
    WithJsonSchema(
        {
            "type": "string",
            "enum": [mode.operator for mode in catalogue.CATALOGUE if not mode.is_card],
            "description": "The beneficiary's Mobile Money operator; required with "
            "`phone_number`, whose country code must be the operator's.",
        }
    ),
]


class PayoutCreate(RequestBody):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "amount": 5000,
                    "operator": "mtn",
                    "phone_number": "22997000000",
                    "beneficiary_name": "Koffi Mensah",
                    "reason": "Remboursement de frais",
                    "external_id": "virement-2031",
                }
            ]
        }
    )

    amount: Annotated[
        Amount,
        WithJsonSchema(
            {
                "type": "number",
                "minimum": 10,
                "maximum": 1_000_000,
                "description": "What the beneficiary receives: at least 10, and at most "
                "1,000,000 with the fees, which the balance pays on top.",
            }
        ),
    ]
    # Payouts are Mobile Money, in the operator's currency; None: that currency (DESIGN).
    currency: Literal["XOF", "XAF"] | None = None
    # Without it: the merchant's own validated payout account.
    phone_number: PhoneNumber | None = None
    operator: PayoutOperator | None = None
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = None
    beneficiary_name: Text255 | None = None
    reason: Text255 | None = None
    metadata: Metadata | None = None


def payout_object(payout: Payout) -> dict[str, Any]:
    currency = payout.currency
    return {
        "reference": payout.reference,
        "status": payout.status,
        "amount": to_major(payout.amount, currency),
        "fee_amount": to_major(payout.fee_amount, currency),
        "total_debited": to_major(payout.total_debited, currency),
        "currency": currency,
        "operator": payout.operator,
        "phone_number": mask(payout.phone_number),
        "beneficiary_name": payout.beneficiary_name,
        "reason": payout.reason,
        # Held until the staff approve or reject it (DESIGN: payouts held for approval).
        "awaiting_approval": payout.awaiting_approval,
        **failure_fields(payout.status, payout.failure_reason),
        "external_id": payout.external_id,
        "metadata": payout.metadata_,
        "livemode": payout.livemode,
        "completed_at": payout.completed_at.isoformat() if payout.completed_at else None,
        "created_at": payout.created_at.isoformat(),
    }


class PayoutObject(BaseModel):
    """A payout (spec: Payout), as `payout_object` builds it; extra keys are forbidden so
    that a field added there and not here fails tests/foundation/test_openapi."""

    model_config = ConfigDict(extra="forbid")

    reference: str = Field(pattern="^pyo_")
    status: Literal["pending", "succeeded", "failed"]
    amount: float = Field(description="What the beneficiary receives.")
    fee_amount: float = Field(description="Added on top of amount, taken from the balance.")
    total_debited: float = Field(description="What leaves the balance: amount + fee_amount.")
    currency: Literal["XOF", "XAF"]
    operator: str
    phone_number: str = Field(description="Masked: the last four digits are asterisks.")
    beneficiary_name: str | None
    reason: str | None
    awaiting_approval: bool = Field(
        description="Held for the staff's approval (live third-party payouts above the "
        "account's threshold): the balance is not debited until it is approved."
    )
    failure_code: str | None = Field(description="Why it failed (snake_case); null unless failed.")
    failure_message: str | None = Field(description="The same, in a French sentence.")
    external_id: str | None
    metadata: dict[str, Any] | None
    livemode: bool
    completed_at: datetime | None
    created_at: datetime
