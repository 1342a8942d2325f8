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
from cauri.models import CheckoutSession
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

    amount: Annotated[Amount, Field(description="In the currency's unit: what the customer pays.")]
    currency: Currency = Currency.XOF
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
        "attempts": attempts,
        "return_url": checkout.return_url,
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
    return_url: str
    callback_url: str | None
    customer: CustomerObject
    country: str | None
    operators: list[str] | None
    metadata: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime
