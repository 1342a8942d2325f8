from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Numeric,
    String,
    text,
)
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class PlanStatus(StrEnum):
    PENDING = "pending"
    SUCCEEDED = "succeeded"
    REFUNDED = "refunded"
    FAILED = "failed"


class PlanResolution(StrEnum):
    """How the staff settled a failed plan's escrow (`cauri plans resolve`)."""

    REFUNDED = "refunded"
    RELEASED_TO_MERCHANT = "released_to_merchant"


class InstallmentPlan(Base):
    """A target paid in instalments, held in the plan's escrow account until complete.

    A plan is "cancelling" while `status` is pending and `cancelled_at` is set; its refund
    has started once `refund_amount` is set (see cauri.plans.settlement). The refund sent
    to a Mobile Money number is a `PlanRefund`; the `refund_*` columns are its summary.
    """

    __tablename__ = "installment_plans"
    __table_args__ = (
        Index(
            "uq_installment_plans_external_id",
            "merchant_id",
            "livemode",
            "external_id",
            unique=True,
            postgresql_where=text("external_id IS NOT NULL"),
        ),
        Index("ix_installment_plans_list", "merchant_id", "livemode", "created_at"),
        CheckConstraint("status IN ('pending', 'succeeded', 'refunded', 'failed')", name="status"),
        CheckConstraint("paid_amount BETWEEN 0 AND target_amount", name="paid_within_target"),
        CheckConstraint("resolution IN ('refunded', 'released_to_merchant')", name="resolution"),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    livemode: Mapped[bool]
    external_id: Mapped[str | None]
    status: Mapped[str]
    description: Mapped[str | None]
    currency: Mapped[str]
    target_amount: Mapped[int] = mapped_column(BigInteger)
    creation_fee_amount: Mapped[int] = mapped_column(BigInteger)
    cancellation_penalty_percent: Mapped[Decimal] = mapped_column(Numeric(7, 4))
    # Sum of the counted parts of succeeded instalments (spec rule 2).
    paid_amount: Mapped[int] = mapped_column(BigInteger, server_default="0")
    # Set when the instalment carrying the creation fee succeeds: until then the fee is due.
    creation_fee_paid: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    cancellation_reason: Mapped[str | None]
    # Refund of a cancellation, fixed when it starts: what goes back to the customer, what
    # the platform keeps, where it is sent, and why it failed (then support takes over).
    refund_amount: Mapped[int | None] = mapped_column(BigInteger)
    penalty_amount: Mapped[int | None] = mapped_column(BigInteger)
    refund_operator: Mapped[str | None]
    refund_phone_number: Mapped[str | None]
    refund_failure_reason: Mapped[str | None]
    # Sum of the plan refunds that reached the customer.
    refunded_amount: Mapped[int] = mapped_column(BigInteger, server_default="0")
    # How the staff settled a plan whose cancellation refund failed (`cauri plans resolve`):
    # `refunded` (a new refund to a number they give) or `released_to_merchant`.
    resolution: Mapped[str | None]
    resolution_reason: Mapped[str | None]
    resolved_at: Mapped[datetime | None]
    expires_at: Mapped[datetime]
    completed_at: Mapped[datetime | None]
    cancelled_at: Mapped[datetime | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class PlanRefund(Base):
    """The refund of a cancelled plan sent to its customer's Mobile Money number, from the
    plan's escrow: a disbursement like a payout or a refund (cauri.disbursements.lifecycle).
    """

    __tablename__ = "plan_refunds"
    __table_args__ = (
        CheckConstraint("status IN ('pending', 'succeeded', 'failed')", name="status"),
        # One refund of a plan under way at a time. Another may follow a failed one (the
        # money is back in escrow) or, by the staff's resolution, a succeeded one (a late
        # instalment's money left in escrow).
        Index(
            "uq_plan_refunds_plan_id",
            "plan_id",
            unique=True,
            postgresql_where=text("status = 'pending'"),
        ),
    )

    reference: Mapped[str] = mapped_column(String, primary_key=True)
    plan_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("installment_plans.id")
    )
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    livemode: Mapped[bool]
    status: Mapped[str]
    amount: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str]
    operator: Mapped[str]
    phone_number: Mapped[str]
    reason: Mapped[str | None]
    # Whether `amount` is out of the escrow right now: set by the debit, cleared by the
    # re-credit of a failure (one refused at initiation never was).
    debited: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    operator_reference: Mapped[str | None]
    failure_reason: Mapped[str | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    completed_at: Mapped[datetime | None]
