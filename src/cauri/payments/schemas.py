"""Request bodies and the payment object (spec: Payment object)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    StringConstraints,
    WithJsonSchema,
)

from cauri.kit.failures import failure_fields
from cauri.kit.metadata import Metadata
from cauri.kit.money import Amount, Currency, to_major
from cauri.kit.period import Period
from cauri.kit.phone import PhoneNumber
from cauri.kit.request_body import RequestBody
from cauri.kit.validation_messages import pattern
from cauri.models import Payment
from cauri.operators import catalogue

Text255 = Annotated[str, StringConstraints(max_length=255)]
_URL = pattern(
    r"^https?://[^\s]+$", "Doit être une adresse web commençant par http:// ou https://."
)
_EMAIL = pattern(r"^[^@\s]+@[^@\s]+\.[^@\s]+$", "Doit être une adresse e-mail valide.")
Url = Annotated[str, StringConstraints(max_length=2048, pattern=_URL)]
Email = Annotated[str, StringConstraints(max_length=255, pattern=_EMAIL)]

# Case-insensitive at run time (`MTN` is `mtn`); the document lists the catalogue's spelling.
OperatorCode = Annotated[
    str,
    StringConstraints(min_length=1, max_length=64),
    WithJsonSchema(
        {
            "type": "string",
            "enum": [mode.operator for mode in catalogue.CATALOGUE],
            "description": "A payment mode's `operator` (GET /payment-modes); case-insensitive. "
            "Mobile Money needs `phone_number` in the operator's country; coris, orange_bf, "
            "wave_bf and orange_sn need `otp`; free_sn needs `return_url`; cards need "
            "`customer.firstname`, `lastname` and `email`, and no `phone_number`.",
        }
    ),
]

_MOMO_EXAMPLE: dict[str, JsonValue] = {
    "amount": 5000,
    "operator": "mtn",
    "phone_number": "22997000000",
    "customer": {"firstname": "Awa", "lastname": "Diallo", "email": "awa@example.com"},
    "metadata": {"order_id": "1042"},
}


class Customer(RequestBody):
    firstname: Text255 | None = None
    lastname: Text255 | None = None
    email: Email | None = None
    phone_number: Annotated[str, StringConstraints(max_length=32)] | None = None


class PaymentFields(RequestBody):
    """What a payment and an instalment share (spec: POST /installment-plans/{ref}/payments)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_MOMO_EXAMPLE]})

    amount: Annotated[
        Amount,
        Field(
            description="In the currency's unit. Mobile Money: the total debited, commission "
            "included, from 10 to 1,000,000; cards are exempt."
        ),
    ]
    # None: the operator's currency (DESIGN: XAF for mtn_cg, XOF otherwise and for cards).
    currency: Currency | None = None
    operator: OperatorCode
    phone_number: PhoneNumber | None = None
    otp: Annotated[str, StringConstraints(min_length=1, max_length=32)] | None = None
    return_url: Url | None = None
    callback_url: Url | None = None
    customer: Customer = Field(default_factory=Customer)
    metadata: Metadata | None = None


@dataclass(frozen=True)
class PaymentFilters:
    """What `GET /payments` filters on; they combine."""

    status: str | None = None
    period: Period = field(default_factory=Period)
    operator: str | None = None
    external_id: str | None = None


class PaymentCreate(PaymentFields):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                _MOMO_EXAMPLE | {"description": "Commande 1042", "external_id": "commande-1042"},
                {
                    "amount": 25000,
                    "operator": "VISA",
                    "customer": {
                        "firstname": "Awa",
                        "lastname": "Diallo",
                        "email": "awa@example.com",
                    },
                    "return_url": "https://boutique.example/merci",
                },
            ]
        }
    )

    description: Text255 | None = None
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = None


def _customer(payment: Payment) -> dict[str, Any]:
    """The customer as given; a Mobile Money payment shows the number actually debited."""
    customer = {
        key: payment.customer.get(key) for key in ("firstname", "lastname", "email", "phone_number")
    }
    if payment.phone_number is not None:
        customer["phone_number"] = payment.phone_number
    return customer


def payment_object(payment: Payment, *, for_event: bool = False) -> dict[str, Any]:
    mode = catalogue.find(payment.operator)
    assert mode is not None  # payments are only created for catalogue operators
    payment_mode: dict[str, Any] = {
        "id": mode.id,
        "name": mode.name,
        "type": mode.type.value,
        "operator": mode.operator,
    }
    if for_event:
        payment_mode |= {"country": mode.country, "country_code": mode.country_code}
    currency = payment.currency
    return {
        "reference": str(payment.id),
        "identifier": payment.identifier,
        "external_id": payment.external_id,
        "status": payment.status,
        "amount": to_major(payment.amount, currency),
        "fee_amount": to_major(payment.fee_amount, currency),
        "total_amount": to_major(payment.total_amount, currency),
        "fee_bearer": payment.fee_bearer,
        "net_amount": to_major(payment.net_amount, currency),
        "amount_refunded": to_major(payment.amount_refunded, currency),
        "currency": currency,
        "description": payment.description,
        "payment_mode": payment_mode,
        "customer": _customer(payment),
        "payment_url": payment.payment_url,
        "checkout_session": payment.checkout_session,
        "payment_link": payment.payment_link,
        **failure_fields(payment.status, payment.failure_reason),
        "metadata": payment.metadata_,
        "livemode": payment.livemode,
        "created_at": payment.created_at.isoformat(),
        "updated_at": payment.updated_at.isoformat(),
    }


# The payment object as the OpenAPI document shows it; `payment_object` builds it. Extra keys
# are forbidden so that a field added there and not here fails tests/foundation/test_openapi.


class PaymentModeSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int
    name: str
    type: Literal["mobile_money", "card", "bank_transfer", "e_wallet"]
    operator: str = Field(description="The code to pass as `operator`.")
    country: str | None = Field(None, description="Webhook notifications only.")
    country_code: str | None = Field(None, description="Webhook notifications only.")


class CustomerObject(BaseModel):
    model_config = ConfigDict(extra="forbid")

    firstname: str | None
    lastname: str | None
    email: str | None
    phone_number: str | None = Field(
        description="Mobile Money: the number debited (digits, country code included)."
    )


class PaymentObject(BaseModel):
    """A payment or an instalment of a plan (spec: Payment object)."""

    model_config = ConfigDict(extra="forbid")

    reference: UUID
    identifier: str = Field(description="A short identifier, for people.")
    external_id: str | None = Field(description="Yours; always null for an instalment.")
    status: Literal["pending", "succeeded", "refunded", "failed"] = Field(
        description="`refunded` once refunds cover the whole amount."
    )
    amount: float
    fee_amount: float = Field(description="The commission.")
    total_amount: float = Field(description="What the customer is debited.")
    fee_bearer: Literal["customer", "merchant"] = Field(
        description="Who pays the commission: `customer` (debited amount + fee_amount) or "
        "`merchant` (credited amount − fee_amount)."
    )
    net_amount: float = Field(description="What the merchant's balance is credited.")
    amount_refunded: float = Field(description="The succeeded refunds, summed.")
    currency: Currency
    description: str | None
    payment_mode: PaymentModeSummary
    customer: CustomerObject
    payment_url: str | None = Field(
        description="Cards: the hosted page to send the customer to. Null for Mobile Money."
    )
    checkout_session: str | None = Field(
        description="The checkout session this payment was tried from, if any."
    )
    payment_link: str | None = Field(
        description="The payment link whose session this payment was tried from, if any."
    )
    failure_code: str | None = Field(description="Why it failed (snake_case); null unless failed.")
    failure_message: str | None = Field(description="The same, in a French sentence.")
    metadata: dict[str, Any] | None
    livemode: bool
    created_at: datetime
    updated_at: datetime
