"""Request bodies and the plan object (spec: Installment plan)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema

from cauri.kit.money import Currency, JsonNumber, to_major
from cauri.models import InstallmentPlan, Payment
from cauri.payments.schemas import payment_object

TARGET_MIN = 1
TARGET_MAX = 99_999_999


class PlanCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

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


class PlanCancel(BaseModel):
    model_config = ConfigDict(extra="ignore")

    # The spec shows no maximum; 500 characters bounds what a row stores.
    reason: Annotated[str, StringConstraints(max_length=500)] | None = None


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


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
        "livemode": plan.livemode,
        "expires_at": plan.expires_at.isoformat(),
        "completed_at": plan.completed_at.isoformat() if plan.completed_at else None,
        "cancelled_at": plan.cancelled_at.isoformat() if plan.cancelled_at else None,
        "created_at": plan.created_at.isoformat(),
    }
    if instalments is not None:
        data["payments"] = [payment_object(payment) for payment in instalments]
    return data
