"""What the catalogue's endpoints answer, described for the OpenAPI document."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

State = Literal["operational", "degraded", "closed"]


class Answer(BaseModel):
    """Extra keys are forbidden: a field answered and not described here fails the response
    (and tests/foundation/test_openapi), so the OpenAPI document stays the truth."""

    model_config = ConfigDict(extra="forbid")


class Availability(Answer):
    """Whether the mode's payments and payouts go through now: from the failure rate of the
    route's recent requests and from what its connector reports. Closed: a new payment or
    payout is refused at once (402). Test keys: always operational."""

    collection: State
    payout: State


class Fees(Answer):
    percent: float
    fixed: float


class PaymentModeOut(Answer):
    id: int
    name: str
    type: str
    operator: str
    country: str | None
    country_code: str | None
    requires_otp: bool
    fees: Fees
    availability: Availability


class PaymentModes(Answer):
    success: Literal[True]
    data: list[PaymentModeOut]


class PredictionOut(Answer):
    phone_number: str = Field(description="Digits, with the country code.")
    country_code: str
    operator: str | None = Field(description="The likely operator code; null: none known.")
    payment_mode_id: int | None
    confidence: Literal["high", "medium", "low"] = Field(
        description="high: the operator's aggregator (pawaPay, live keys) says so; medium: the "
        "numbering plan; low: no operator of the catalogue for this number."
    )
    source: Literal["numbering_plan", "pawapay"]
    carrier: str | None = Field(description="The carrier the numbering plan names.")
    wallets: list[str] = Field(description="Wallets any number may hold here (Wave).")
    note: str = Field(description="A prediction is a hint: numbers move between operators.")


class Prediction(Answer):
    success: Literal[True]
    data: PredictionOut
