"""Request bodies and the plan object (spec: Installment plan)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema

from cauri.kit.money import Currency, JsonNumber, to_major
from cauri.kit.request_body import RequestBody
from cauri.models import InstallmentPlan, Payment
from cauri.models.plans import PlanStatus
from cauri.payments.schemas import PaymentObject, payment_object

TARGET_MIN = 1
TARGET_MAX = 99_999_999


class PlanCreate(RequestBody):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "target_amount": 50000,
                    "currency": "XOF",
                    "description": "Téléphone, en cinq versements",
                    "external_id": "plan-7731",
                }
            ]
        }
    )

    # In major units, excluding the creation fee (spec: Limits).
    target_amount: Annotated[
        Decimal,
        JsonNumber,
        Field(ge=TARGET_MIN, le=TARGET_MAX),
        WithJsonSchema({"type": "number", "minimum": TARGET_MIN, "maximum": TARGET_MAX}),
    ]
    currency: Currency = Currency.XOF
    description: Annotated[str, StringConstraints(max_length=255)] | None = None
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = None


class PlanCancel(RequestBody):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"reason": "Le client renonce à l'achat."}]}
    )

    # The spec shows no maximum; 500 characters bounds what a row stores.
    reason: Annotated[str, StringConstraints(max_length=500)] | None = None


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def _settled_cancellation(plan: InstallmentPlan) -> dict[str, Any]:
    """What a cancellation gave back and kept, once settled (refunded or failed); how the
    staff resolved a failed one. Null while the plan is pending."""
    settled = plan.cancelled_at is not None and plan.status in (
        PlanStatus.REFUNDED,
        PlanStatus.FAILED,
    )
    return {
        "refunded_amount": to_major(plan.refunded_amount, plan.currency) if settled else None,
        "penalty_amount": to_major(plan.penalty_amount or 0, plan.currency) if settled else None,
        "resolution": plan.resolution,
        "resolution_reason": plan.resolution_reason,
        "resolved_at": plan.resolved_at.isoformat() if plan.resolved_at else None,
    }


def plan_object(
    plan: InstallmentPlan, instalments: Sequence[Payment] | None = None
) -> dict[str, Any]:
    """`payments` only when the instalments are given (GET /installment-plans/{reference})."""
    currency = plan.currency
    data: dict[str, Any] = {
        "reference": str(plan.id),
        "external_id": plan.external_id,
        "status": plan.status,
        "description": plan.description,
        "currency": currency,
        "target_amount": to_major(plan.target_amount, currency),
        "creation_fee_amount": to_major(plan.creation_fee_amount, currency),
        "cancellation_penalty_percent": _number(plan.cancellation_penalty_percent),
        "paid_amount": to_major(plan.paid_amount, currency),
        "remaining_amount": to_major(plan.target_amount - plan.paid_amount, currency),
        "cancellation_reason": plan.cancellation_reason,
        **_settled_cancellation(plan),
        "livemode": plan.livemode,
        "expires_at": plan.expires_at.isoformat(),
        "completed_at": plan.completed_at.isoformat() if plan.completed_at else None,
        "cancelled_at": plan.cancelled_at.isoformat() if plan.cancelled_at else None,
        "created_at": plan.created_at.isoformat(),
    }
    if instalments is not None:
        data["payments"] = [payment_object(payment) for payment in instalments]
    return data


class PlanObject(BaseModel):
    """An installment plan (spec: Installment plan), as `plan_object` builds it; extra keys
    are forbidden so that a field added there and not here fails
    tests/foundation/test_openapi."""

    model_config = ConfigDict(extra="forbid")

    reference: UUID
    external_id: str | None
    status: Literal["pending", "succeeded", "refunded", "failed"] = Field(
        description="`pending` while instalments come in and while a cancellation is paid "
        "back (`cancelled_at` set); `failed`: the cancellation's refund failed."
    )
    description: str | None
    currency: Currency
    target_amount: float = Field(description="The target, excluding the creation fee.")
    creation_fee_amount: float = Field(description="Taken from the first instalment.")
    cancellation_penalty_percent: float = Field(
        description="Kept from what the customer paid if the plan is cancelled or expires."
    )
    paid_amount: float
    remaining_amount: float
    cancellation_reason: str | None
    refunded_amount: float | None = Field(
        description="Once a cancellation is settled (`refunded` or `failed`): what went back "
        "to the customer. Null before."
    )
    penalty_amount: float | None = Field(
        description="Once a cancellation is settled: the penalty kept. Null before."
    )
    resolution: Literal["refunded", "released_to_merchant"] | None = Field(
        description="How the staff settled a `failed` plan's escrow: a new refund to a number "
        "(the plan becomes `refunded`), or the money released to the merchant."
    )
    resolution_reason: str | None
    resolved_at: datetime | None
    livemode: bool
    expires_at: datetime
    completed_at: datetime | None
    cancelled_at: datetime | None
    created_at: datetime
    payments: list[PaymentObject] | None = Field(
        None, description="The instalments: on `GET /installment-plans/{reference}` only."
    )
