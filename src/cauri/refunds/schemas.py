"""The refund request and the refund object (DESIGN: Refunds)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints

from cauri.kit.money import to_major
from cauri.models import Refund


class RefundCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reason: Annotated[str, StringConstraints(max_length=255)] | None = None


def refund_object(refund: Refund) -> dict[str, Any]:
    return {
        "reference": refund.reference,
        "payment": str(refund.payment_id),
        "status": refund.status,
        "amount": to_major(refund.amount, refund.currency),
        "currency": refund.currency,
        "reason": refund.reason,
        "livemode": refund.livemode,
        "created_at": refund.created_at.isoformat(),
        "completed_at": refund.completed_at.isoformat() if refund.completed_at else None,
    }
