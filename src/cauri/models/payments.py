from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, Integer, String, text
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class Payment(Base):
    __tablename__ = "payments"
    __table_args__ = (
        Index(
            "uq_payments_external_id",
            "merchant_id",
            "livemode",
            "external_id",
            unique=True,
            postgresql_where=text("external_id IS NOT NULL"),
        ),
        Index("ix_payments_list", "merchant_id", "livemode", "created_at"),
        Index("ix_payments_plan", "plan_id", postgresql_where=text("plan_id IS NOT NULL")),
        Index(
            "ix_payments_checkout_session",
            "checkout_session",
            postgresql_where=text("checkout_session IS NOT NULL"),
        ),
        CheckConstraint("amount_refunded BETWEEN 0 AND amount", name="refunded_within_amount"),
        CheckConstraint("fee_bearer IN ('customer', 'merchant')", name="fee_bearer"),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    identifier: Mapped[str] = mapped_column(String, unique=True)
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    livemode: Mapped[bool]
    external_id: Mapped[str | None]
    status: Mapped[str]
    amount: Mapped[int] = mapped_column(BigInteger)
    fee_amount: Mapped[int] = mapped_column(BigInteger)
    # Who pays fee_amount, the merchant's setting when the payment was created: `customer`
    # (debited amount + fee) or `merchant` (debited amount, credited amount − fee).
    fee_bearer: Mapped[str] = mapped_column(String, server_default="customer")
    # Sum of the succeeded refunds; the payment is `refunded` when it reaches `amount`.
    amount_refunded: Mapped[int] = mapped_column(BigInteger, server_default="0")
    currency: Mapped[str]
    description: Mapped[str | None]
    payment_mode_id: Mapped[int] = mapped_column(Integer)
    operator: Mapped[str]
    phone_number: Mapped[str | None]
    customer: Mapped[dict[str, Any]] = mapped_column(JSONB)
    return_url: Mapped[str | None]
    callback_url: Mapped[str | None]
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONB)
    payment_url: Mapped[str | None]
    operator_reference: Mapped[str | None]
    failure_reason: Mapped[str | None]
    # An instalment's plan, and the part of its amount that pays the plan's creation fee
    # (0 for every other instalment and for plain payments).
    plan_id: Mapped[uuid.UUID | None] = mapped_column(
        UUID(as_uuid=True), ForeignKey("installment_plans.id")
    )
    plan_fee_amount: Mapped[int] = mapped_column(BigInteger, server_default="0")
    # The reference of the checkout session this payment was tried from (an attempt), if
    # any: the payment object shows it as it is.
    checkout_session: Mapped[str | None] = mapped_column(ForeignKey("checkout_sessions.reference"))
    # The payment link whose session it was tried from, if any.
    payment_link: Mapped[str | None] = mapped_column(ForeignKey("payment_links.reference"))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]

    @property
    def total_amount(self) -> int:
        """What the customer is debited."""
        return self.amount + self.fee_amount if self.fee_bearer == "customer" else self.amount

    @property
    def net_amount(self) -> int:
        """What the merchant's balance (or the plan's escrow) is credited."""
        return self.amount if self.fee_bearer == "customer" else self.amount - self.fee_amount
