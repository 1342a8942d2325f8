from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, Boolean, CheckConstraint, ForeignKey, Index, String, text
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class Refund(Base):
    """A refund of one Mobile Money payment (the whole or a part), paid back to the customer's
    number. A payment takes several refunds until what remains refundable is nothing.

    Taken from the merchant's balance, or, for an instalment that succeeded after its plan's
    cancellation began (`plan_id` set), from that plan's escrow.
    """

    __tablename__ = "refunds"
    __table_args__ = (
        CheckConstraint("status IN ('pending', 'succeeded', 'failed')", name="status"),
        Index("ix_refunds_payment_id", "payment_id"),
        Index("ix_refunds_merchant", "merchant_id", "livemode", "created_at"),
        Index(
            "uq_refunds_external_id",
            "merchant_id",
            "livemode",
            "external_id",
            unique=True,
            postgresql_where=text("external_id IS NOT NULL"),
        ),
    )

    reference: Mapped[str] = mapped_column(String, primary_key=True)
    payment_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), ForeignKey("payments.id"))
    plan_id: Mapped[uuid.UUID | None] = mapped_column(
        UUID(as_uuid=True), ForeignKey("installment_plans.id")
    )
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    livemode: Mapped[bool]
    external_id: Mapped[str | None]
    status: Mapped[str]
    amount: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str]
    reason: Mapped[str | None]
    operator: Mapped[str]
    phone_number: Mapped[str]
    # Whether `amount` is out of its source right now: set by the debit, cleared by the
    # re-credit of a failure (one refused at initiation never was).
    debited: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    operator_reference: Mapped[str | None]
    failure_reason: Mapped[str | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    completed_at: Mapped[datetime | None]
