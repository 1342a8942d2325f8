from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, Index, String
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base

PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"


class MoneyApproval(Base):
    """A live money action above the platform's `payout_dual_approval_above` (a credit, a
    failed plan's resolution) or a loosening of that amount, asked by one person and waiting
    for a second one's approval (maker-checker, cauri.staff.approvals). Its two approvals
    are the request itself and the decision; `params` are the action's own arguments,
    replayed as they were asked when it is approved."""

    __tablename__ = "money_approvals"
    __table_args__ = (
        CheckConstraint("status IN ('pending', 'approved', 'rejected')", name="status"),
        CheckConstraint(
            "status = 'pending' OR (decided_by IS NOT NULL AND decided_at IS NOT NULL)",
            name="decided",
        ),
        Index("ix_money_approvals_pending", "status", "requested_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    kind: Mapped[str] = mapped_column(String)  # the staff action's name: merchant.credit …
    subject: Mapped[str]  # the merchant's id, the plan's reference, `platform`
    amount: Mapped[int | None] = mapped_column(BigInteger)  # minor units; None: an unset
    currency: Mapped[str]
    livemode: Mapped[bool]
    params: Mapped[dict[str, Any]] = mapped_column(JSONB)
    reason: Mapped[str | None]
    status: Mapped[str]
    # The two people, by cauri.audit.Actor: key, name as shown, staff account.
    requested_by: Mapped[str]
    requested_by_name: Mapped[str]
    requested_staff_account_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    requested_at: Mapped[datetime]
    decided_by: Mapped[str | None]
    decided_by_name: Mapped[str | None]
    decided_staff_account_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    decided_at: Mapped[datetime | None]
