"""The checkout session's request body and object (issue 25; Stripe's Checkout Session is the
model where the issue is silent)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints

from cauri.kit.metadata import Metadata
from cauri.kit.money import Amount, Currency, to_major
from cauri.kit.period import Period
from cauri.kit.request_body import RequestBody
from cauri.kit.validation_messages import pattern
from cauri.models import CheckoutSession, PaymentLink
from cauri.operators.catalogue import COUNTRY_NAMES
from cauri.payments.schemas import Customer, CustomerObject, OperatorCode, Text255, Url

MIN_EXPIRES_IN = 300
MAX_EXPIRES_IN = 604_800
DEFAULT_EXPIRES_IN = 86_400

# Case-insensitive, like the catalogue's country filter.
CountryCode = Annotated[
    str,
    StringConstraints(
        pattern=pattern(
            "(?i)^(" + "|".join(COUNTRY_NAMES) + ")$",
            f"Doit être un code pays parmi {', '.join(COUNTRY_NAMES)}.",
        )
    ),
]

_EXAMPLE: dict[str, JsonValue] = {
    "amount": 5000,
    "description": "Commande 1042",
    "external_id": "commande-1042",
    "return_url": "https://boutique.example/merci",
    "customer": {"firstname": "Awa", "lastname": "Diallo", "phone_number": "22997000000"},
    "country": "BJ",
}


class CheckoutSessionCreate(RequestBody):
    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE]})

    amount: Amount | None = Field(
        None,
        description="In the currency's unit: what the customer pays. Required unless `plan`; "
        "with a plan and no amount, the customer chooses the instalment within its bounds.",
    )
    currency: Currency | None = Field(None, description="XOF; a plan's session: the plan's.")
    plan: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = Field(
        None, description="An installment plan's reference: the session pays one instalment."
    )
    description: Text255 | None = None
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = None
    return_url: Annotated[
        Url,
        Field(
            description="Where the customer goes at the end, with `?checkout_session=REF` added."
        ),
    ]
    callback_url: Url | None = None
    customer: Customer = Field(
        default_factory=Customer, description="Prefilled on the page; each field optional."
    )
    country: CountryCode | None = Field(None, description="Preselected on the page.")
    operators: (
        Annotated[
            list[OperatorCode],
            Field(min_length=1, max_length=21, description="Only these modes are offered."),
        ]
        | None
    ) = None
    metadata: Metadata | None = None
    expires_in: Annotated[
        int,
        Field(
            ge=MIN_EXPIRES_IN,
            le=MAX_EXPIRES_IN,
            description="Seconds until the session expires (default: a day).",
        ),
    ] = DEFAULT_EXPIRES_IN


@dataclass(frozen=True)
class SessionFilters:
    status: str | None = None
    period: Period = field(default_factory=Period)


def session_object(checkout: CheckoutSession, attempts: list[str]) -> dict[str, Any]:
    """`attempts`: the references of the payments tried from it, oldest first."""
    currency = checkout.currency
    return {
        "reference": checkout.reference,
        "url": checkout.url,
        "status": checkout.status,
        "amount": None if checkout.amount is None else to_major(checkout.amount, currency),
        "currency": currency,
        "description": checkout.description,
        "external_id": checkout.external_id,
        "livemode": checkout.livemode,
        "expires_at": checkout.expires_at.isoformat(),
        "completed_at": checkout.completed_at.isoformat() if checkout.completed_at else None,
        "payment": None if checkout.payment_id is None else str(checkout.payment_id),
        "plan": None if checkout.plan_id is None else str(checkout.plan_id),
        "attempts": attempts,
        "return_url": checkout.return_url,
        "payment_link": checkout.payment_link,
        "callback_url": checkout.callback_url,
        "customer": {
            key: checkout.customer.get(key)
            for key in ("firstname", "lastname", "email", "phone_number")
        },
        "country": checkout.country,
        "operators": checkout.operators,
        "metadata": checkout.metadata_,
        "created_at": checkout.created_at.isoformat(),
        "updated_at": checkout.updated_at.isoformat(),
    }


class CheckoutSessionObject(BaseModel):
    """A checkout session: the customer's page (`url`) and what became of it."""

    model_config = ConfigDict(extra="forbid")

    reference: str = Field(description="`cs_` and 128 random bits: the page's address holds it.")
    url: str = Field(description="The customer's page: send the customer there.")
    status: Literal["open", "complete", "expired"]
    amount: float | None
    currency: Currency
    description: str | None
    external_id: str | None
    livemode: bool
    expires_at: datetime
    completed_at: datetime | None
    payment: str | None = Field(description="The reference of the payment that succeeded.")
    attempts: list[str] = Field(description="The references of the payments tried, oldest first.")
    plan: str | None = Field(description="The installment plan it pays an instalment of.")
    return_url: str | None = Field(description="Null only for a payment link's session.")
    payment_link: str | None = Field(description="The payment link whose visit opened it.")
    callback_url: str | None
    customer: CustomerObject
    country: str | None
    operators: list[str] | None
    metadata: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime


class PaymentLinkCreate(RequestBody):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"description": "Cotisation annuelle", "amount": 15000, "external_id": "cot-2027"},
                {"description": "Don libre", "amount": None, "min_amount": 500},
            ]
        }
    )

    description: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    amount: Amount | None = Field(None, description="Null: the customer types it.")
    min_amount: Amount | None = Field(None, description="Without `amount`: the least typed.")
    max_amount: Amount | None = Field(None, description="Without `amount`: the most typed.")
    currency: Currency = Currency.XOF
    reusable: bool = Field(True, description="False: the link takes one payment.")
    max_uses: Annotated[int, Field(ge=1, le=1_000_000)] | None = Field(
        None, description="The payments it takes at most (reusable links)."
    )
    expires_at: datetime | None = None
    return_url: Url | None = None
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = None
    metadata: Metadata | None = None


@dataclass(frozen=True)
class LinkFilters:
    active: bool | None = None
    period: Period = field(default_factory=Period)


def _major(amount: int | None, currency: str) -> int | float | None:
    return None if amount is None else to_major(amount, currency)


def link_object(link: PaymentLink) -> dict[str, Any]:
    currency = link.currency
    return {
        "reference": link.reference,
        "url": link.url,
        "qr_code_url": f"{link.url}/qr.svg",
        "active": link.active,
        "uses": link.uses,
        "description": link.description,
        "amount": _major(link.amount, currency),
        "min_amount": _major(link.min_amount, currency),
        "max_amount": _major(link.max_amount, currency),
        "currency": currency,
        "reusable": link.reusable,
        "max_uses": link.max_uses,
        "expires_at": link.expires_at.isoformat() if link.expires_at else None,
        "return_url": link.return_url,
        "external_id": link.external_id,
        "metadata": link.metadata_,
        "livemode": link.livemode,
        "created_at": link.created_at.isoformat(),
        "updated_at": link.updated_at.isoformat(),
    }


class PaymentLinkObject(BaseModel):
    """A payment link: a lasting address whose every visit opens a checkout session."""

    model_config = ConfigDict(extra="forbid")

    reference: str = Field(description="`plink_` and random bits.")
    url: str = Field(description="The short address to share: `/l/{code}`.")
    qr_code_url: str = Field(description="An SVG QR code of `url`, for print.")
    active: bool
    uses: int = Field(description="The payments completed through it.")
    description: str
    amount: float | None
    min_amount: float | None
    max_amount: float | None
    currency: Currency
    reusable: bool
    max_uses: int | None
    expires_at: datetime | None
    return_url: str | None
    external_id: str | None
    metadata: dict[str, Any] | None
    livemode: bool
    created_at: datetime
    updated_at: datetime
