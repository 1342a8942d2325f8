"""Request bodies and the payment object (spec: Payment object)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from cauri.kit.metadata import Metadata
from cauri.kit.money import Amount, Currency, to_major
from cauri.models import Payment
from cauri.operators import catalogue

Text255 = Annotated[str, StringConstraints(max_length=255)]
Url = Annotated[str, StringConstraints(max_length=2048, pattern=r"^https?://[^\s]+$")]
Email = Annotated[str, StringConstraints(max_length=255, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")]


class Customer(BaseModel):
    firstname: Text255 | None = None
    lastname: Text255 | None = None
    email: Email | None = None
    phone_number: Annotated[str, StringConstraints(max_length=32)] | None = None


class PaymentFields(BaseModel):
    """What a payment and an instalment share (spec: POST /installment-plans/{ref}/payments)."""

    model_config = ConfigDict(extra="ignore")

    amount: Amount
    # None: the operator's currency (DESIGN: XAF for mtn_cg, XOF otherwise and for cards).
    currency: Currency | None = None
    operator: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    phone_number: Annotated[str, StringConstraints(max_length=32)] | None = None
    otp: Annotated[str, StringConstraints(min_length=1, max_length=32)] | None = None
    return_url: Url | None = None
    callback_url: Url | None = None
    customer: Customer = Field(default_factory=Customer)
    metadata: Metadata | None = None


class PaymentCreate(PaymentFields):
    description: Text255 | None = None
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = None


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
        "total_amount": to_major(payment.amount + payment.fee_amount, currency),
        "currency": currency,
        "description": payment.description,
        "payment_mode": payment_mode,
        "customer": {
            key: payment.customer.get(key)
            for key in ("firstname", "lastname", "email", "phone_number")
        },
        "payment_url": payment.payment_url,
        "metadata": payment.metadata_,
        "livemode": payment.livemode,
        "created_at": payment.created_at.isoformat(),
        "updated_at": payment.updated_at.isoformat(),
    }
