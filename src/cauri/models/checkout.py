from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class SessionStatus(StrEnum):
    OPEN = "open"
    COMPLETE = "complete"
    EXPIRED = "expired"


class CheckoutSession(Base):
    """A customer's visit to pay a merchant on Cauri's page (issue 25): each payment tried
    from it is an attempt (`Payment.checkout_session_id`); the first that succeeds completes
    it (`payment_id`), once. `amount` is None when the customer types it (a plan's
    instalment without one, within the plan's bounds at that moment)."""

    __tablename__ = "checkout_sessions"
    __table_args__ = (
        Index(
            "uq_checkout_sessions_external_id",
            "merchant_id",
            "livemode",
            "external_id",
            unique=True,
            postgresql_where=text("external_id IS NOT NULL"),
        ),
        Index("ix_checkout_sessions_list", "merchant_id", "livemode", "created_at"),
        CheckConstraint("status IN ('open', 'complete', 'expired')", name="status"),
        CheckConstraint("(status = 'complete') = (payment_id IS NOT NULL)", name="completed_by"),
        CheckConstraint("amount IS NULL OR amount > 0", name="amount_positive"),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    reference: Mapped[str] = mapped_column(String, unique=True)
    # The customer's page, under CAURI_PUBLIC_URL when the session was created.
    url: Mapped[str]
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    livemode: Mapped[bool]
    external_id: Mapped[str | None]
    status: Mapped[str]
    amount: Mapped[int | None] = mapped_column(BigInteger)
    currency: Mapped[str]
    description: Mapped[str | None]
    # None: a payment link's session without one; the receipt is the end of the way.
    return_url: Mapped[str | None]
    callback_url: Mapped[str | None]
    customer: Mapped[dict[str, Any]] = mapped_column(JSONB)
    country: Mapped[str | None]
    # The merchant's allow-list of operator codes (None: every open mode).
    operators: Mapped[list[str] | None] = mapped_column(ARRAY(String))
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONB)
    expires_at: Mapped[datetime]
    completed_at: Mapped[datetime | None]
    # The attempt that completed it. The foreign key is added after both tables exist:
    # payments name their session too.
    payment_id: Mapped[uuid.UUID | None] = mapped_column(
        UUID(as_uuid=True),
        ForeignKey("payments.id", use_alter=True, name="fk_checkout_sessions_payment_id_payments"),
    )
    # The installment plan it pays one instalment of, if any.
    plan_id: Mapped[uuid.UUID | None] = mapped_column(
        UUID(as_uuid=True), ForeignKey("installment_plans.id")
    )
    # The payment link whose visit opened it, if any.
    payment_link: Mapped[str | None] = mapped_column(ForeignKey("payment_links.reference"))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class PaymentLink(Base):
    """A lasting address (`/l/{code}`) whose every visit, once the customer goes on, opens a
    checkout session. `uses` counts the sessions completed through it; a link that is not
    `reusable` takes one, and `max_uses` caps a reusable one. `amount` None: the customer
    types it, within `min_amount` and `max_amount`."""

    __tablename__ = "payment_links"
    __table_args__ = (
        Index(
            "uq_payment_links_external_id",
            "merchant_id",
            "livemode",
            "external_id",
            unique=True,
            postgresql_where=text("external_id IS NOT NULL"),
        ),
        Index("ix_payment_links_list", "merchant_id", "livemode", "created_at"),
        CheckConstraint("uses >= 0 AND (max_uses IS NULL OR uses <= max_uses)", name="uses"),
        CheckConstraint("amount IS NULL OR amount > 0", name="amount_positive"),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    reference: Mapped[str] = mapped_column(String, unique=True)
    code: Mapped[str] = mapped_column(String, unique=True)
    url: Mapped[str]
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    livemode: Mapped[bool]
    external_id: Mapped[str | None]
    description: Mapped[str]
    amount: Mapped[int | None] = mapped_column(BigInteger)
    min_amount: Mapped[int | None] = mapped_column(BigInteger)
    max_amount: Mapped[int | None] = mapped_column(BigInteger)
    currency: Mapped[str]
    reusable: Mapped[bool] = mapped_column(Boolean)
    max_uses: Mapped[int | None] = mapped_column(Integer)
    uses: Mapped[int] = mapped_column(Integer, server_default="0")
    active: Mapped[bool] = mapped_column(Boolean)
    expires_at: Mapped[datetime | None]
    return_url: Mapped[str | None]
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONB)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
