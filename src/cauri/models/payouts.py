from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Identity,
    Index,
    String,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base

PAYOUT_STATUSES = ("pending", "succeeded", "failed")
# None: no approval needed. `required`: held, the balance untouched, until `cauri payouts
# approve` (then `approved`) or `reject` (then `rejected`, the payout failed).
APPROVAL_REQUIRED = "required"
APPROVAL_STATES = (APPROVAL_REQUIRED, "approved", "rejected")


class Payout(Base):
    __tablename__ = "payouts"
    __table_args__ = (
        CheckConstraint("status IN ('pending', 'succeeded', 'failed')", name="status"),
        CheckConstraint("approval IN ('required', 'approved', 'rejected')", name="approval"),
        Index(
            "uq_payouts_external_id",
            "merchant_id",
            "livemode",
            "external_id",
            unique=True,
            postgresql_where=text("external_id IS NOT NULL"),
        ),
        Index("ix_payouts_list", "merchant_id", "livemode", "created_at"),
    )

    reference: Mapped[str] = mapped_column(String, primary_key=True)
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    livemode: Mapped[bool]
    external_id: Mapped[str | None]
    status: Mapped[str]
    amount: Mapped[int] = mapped_column(BigInteger)
    fee_amount: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str]
    operator: Mapped[str]
    phone_number: Mapped[str]
    # False: the merchant's own validated payout account (no caps, no approval).
    third_party: Mapped[bool] = mapped_column(Boolean)
    beneficiary_name: Mapped[str | None]
    reason: Mapped[str | None]
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONB)
    approval: Mapped[str | None]
    # Whether total_debited is out of the balance right now: set by the debit, cleared by
    # the re-credit of a failure. A held payout and one refused at initiation never were.
    debited: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    operator_reference: Mapped[str | None]
    failure_reason: Mapped[str | None]
    # The batch it was made for (POST /payout-batches): its end may complete that batch.
    batch_reference: Mapped[str | None] = mapped_column(ForeignKey("payout_batches.reference"))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    completed_at: Mapped[datetime | None]

    @property
    def total_debited(self) -> int:
        return self.amount + self.fee_amount

    @property
    def awaiting_approval(self) -> bool:
        return self.approval == APPROVAL_REQUIRED


class PayoutApproval(Base):
    """One person's approval of a held payout (maker-checker: above the platform's
    `payout_dual_approval_above`, two different people must approve before it is paid).
    `approver` identifies the person (cauri.audit.Actor.key): nobody approves twice."""

    __tablename__ = "payout_approvals"
    __table_args__ = (UniqueConstraint("payout_reference", "approver"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    payout_reference: Mapped[str] = mapped_column(ForeignKey("payouts.reference"))
    approver: Mapped[str]
    # Who it was, as shown: the staff member's email or `cli:<os user>`.
    approver_name: Mapped[str]
    staff_account_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    at: Mapped[datetime]


DRAFT_STATES = ("awaiting", "approved", "rejected", "cancelled")


class TeamDraft:
    """What a merchant team's money action awaiting a second member's approval has, whatever
    it asks for (cauri.team.second_approval): who asked, its state, who decided."""

    reference: Mapped[str] = mapped_column(String, primary_key=True)
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    external_id: Mapped[str]
    status: Mapped[str]
    created_by: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"))
    created_by_email: Mapped[str]
    created_at: Mapped[datetime]
    decided_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    decided_by_email: Mapped[str | None]
    decided_at: Mapped[datetime | None]


class PayoutDraft(TeamDraft, Base):
    """A live payout asked for on the dashboard above the owner's threshold
    (`Merchant.team_approval_above`): neither a payout nor a debit, nor counted in any cap,
    until a second member of the team approves it; then the payout it becomes has the
    draft's reference as its `external_id` (cauri.team.drafts). `request` is the payout's
    request as the API would take it."""

    __tablename__ = "payout_drafts"
    __table_args__ = (
        CheckConstraint(
            "status IN ('awaiting', 'approved', 'rejected', 'cancelled')", name="status"
        ),
        Index("ix_payout_drafts_list", "merchant_id", "status", "created_at"),
        # A request sent twice is one draft.
        UniqueConstraint("merchant_id", "external_id"),
    )

    request: Mapped[dict[str, Any]] = mapped_column(JSONB)
    # As the payout would be: shown in the list of drafts.
    amount: Mapped[int] = mapped_column(BigInteger)
    fee_amount: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str]
    operator: Mapped[str]
    phone_number: Mapped[str]
    third_party: Mapped[bool] = mapped_column(Boolean)
