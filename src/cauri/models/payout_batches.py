"""Bulk payouts (issue 28): a batch of up to 1,000 payout requests, each made by the worker
into an ordinary payout (`cauri.payouts.service.PayoutService.create`) or refused with the
error the API would have answered."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base
from cauri.models.payouts import TeamDraft

PROCESSING, COMPLETED = "processing", "completed"


class PayoutBatch(Base):
    __tablename__ = "payout_batches"
    __table_args__ = (
        CheckConstraint("status IN ('processing', 'completed')", name="status"),
        # A replay of the batch's external_id finds the first batch (DESIGN, invariant 4).
        Index(
            "uq_payout_batches_external_id",
            "merchant_id",
            "livemode",
            "external_id",
            unique=True,
        ),
        Index("ix_payout_batches_list", "merchant_id", "livemode", "created_at"),
    )

    reference: Mapped[str] = mapped_column(String, primary_key=True)
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    livemode: Mapped[bool]
    external_id: Mapped[str]
    status: Mapped[str]
    item_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    # When its last item became final (a payout succeeded or failed, or a refusal).
    completed_at: Mapped[datetime | None]


class PayoutBatchItem(Base):
    """One request of a batch, in the order sent. Until the worker has made it: `request`
    (the validated payout request) and neither `payout_reference` nor `error`; after: one
    of the two. An item refused at validation has its `error` from the start."""

    __tablename__ = "payout_batch_items"
    __table_args__ = (
        CheckConstraint("payout_reference IS NULL OR error IS NULL", name="payout_or_error"),
        # A batched payout's end finds the batches that list it (cauri.payout_batches).
        Index(
            "ix_payout_batch_items_payout_reference",
            "payout_reference",
            postgresql_where=text("payout_reference IS NOT NULL"),
        ),
    )

    batch_reference: Mapped[str] = mapped_column(
        ForeignKey("payout_batches.reference"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    external_id: Mapped[str | None]
    # none_as_null: None is SQL NULL, not JSON null, so that "not made yet" is IS NULL.
    request: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))
    payout_reference: Mapped[str | None] = mapped_column(ForeignKey("payouts.reference"))
    # The API's error object: {code, message, details?, reference?}.
    error: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))


class PayoutBatchDraft(TeamDraft, Base):
    """A live batch uploaded on the dashboard whose items add up above the owner's threshold
    (`Merchant.team_approval_above`): no batch, nothing paid, until a second member of the
    team approves it; then the batch it becomes has the draft's reference as its
    `external_id` (cauri.team.batch_drafts). `external_id` names the file (its bytes): the
    same file sent again while its draft awaits is that draft."""

    __tablename__ = "payout_batch_drafts"
    __table_args__ = (
        CheckConstraint(
            "status IN ('awaiting', 'approved', 'rejected', 'cancelled')", name="status"
        ),
        Index("ix_payout_batch_drafts_list", "merchant_id", "status", "created_at"),
        Index(
            "uq_payout_batch_drafts_awaiting",
            "merchant_id",
            "external_id",
            unique=True,
            postgresql_where=text("status = 'awaiting'"),
        ),
    )

    file_name: Mapped[str]
    # The file as read (cauri.payout_batches.files): approved, its items are the batch's, as
    # the approver saw them.
    file_text: Mapped[str] = mapped_column(Text)
    item_count: Mapped[int] = mapped_column(Integer)
    # What its items ask to send, in francs CFA (the threshold's unit), fees aside.
    amount: Mapped[int] = mapped_column(BigInteger)
    # The merchant's validated payout account when asked ("operator number"), which its
    # items without a number are paid to: approved, they go there or nowhere.
    own_account: Mapped[str | None]
