"""The refund request and the refund object (DESIGN: Refunds)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from cauri.kit.failures import failure_fields
from cauri.kit.money import Amount, Currency, to_major
from cauri.kit.request_body import RequestBody
from cauri.models import Refund


class RefundCreate(RequestBody):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"amount": 1000, "reason": "Article retourné", "external_id": "avoir-77"}]
        }
    )

    # None: all that remains refundable (DESIGN: Refunds).
    amount: Amount | None = Field(
        None, description="At most what remains refundable; left out: all of it."
    )
    reason: Annotated[str, StringConstraints(max_length=255)] | None = None
    # Idempotency per account and environment, as for payments and payouts: a refund retried
    # after a timeout under the same external_id is the first one (200), never a second.
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = Field(
        None, description="Your reference for this refund: a retry under it refunds nothing more."
    )


def refund_object(refund: Refund) -> dict[str, Any]:
    return {
        "reference": refund.reference,
        "payment": str(refund.payment_id),
        "external_id": refund.external_id,
        "status": refund.status,
        "amount": to_major(refund.amount, refund.currency),
        "currency": refund.currency,
        "reason": refund.reason,
        **failure_fields(refund.status, refund.failure_reason),
        "livemode": refund.livemode,
        "created_at": refund.created_at.isoformat(),
        "completed_at": refund.completed_at.isoformat() if refund.completed_at else None,
    }


class RefundObject(BaseModel):
    """A refund (DESIGN: Refunds), as `refund_object` builds it; extra keys are forbidden so
    that a field added there and not here fails tests/foundation/test_openapi."""

    model_config = ConfigDict(extra="forbid")

    reference: str = Field(pattern="^re_")
    payment: UUID = Field(description="The reference of the payment refunded.")
    external_id: str | None
    status: Literal["pending", "succeeded", "failed"]
    amount: float = Field(description="What the customer gets back.")
    currency: Currency
    reason: str | None
    failure_code: str | None = Field(description="Why it failed (snake_case); null unless failed.")
    failure_message: str | None = Field(description="The same, in a French sentence.")
    livemode: bool
    created_at: datetime
    completed_at: datetime | None
