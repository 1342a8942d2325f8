"""Payout batches uploaded on a merchant's dashboard awaiting a second member's approval,
when their items add up above the owner's threshold (issue 28)

Revision ID: 0039_payout_batch_drafts
Revises: 0038_operator_statements
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0039_payout_batch_drafts"
down_revision: str | None = "0038_operator_statements"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "payout_batch_drafts",
        sa.Column("reference", sa.String(), nullable=False),
        sa.Column("merchant_id", sa.String(), nullable=False),
        sa.Column("external_id", sa.String(), nullable=False),
        sa.Column("file_name", sa.String(), nullable=False),
        sa.Column("file_text", sa.Text(), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("own_account", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("created_by", sa.UUID(), nullable=False),
        sa.Column("created_by_email", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by", sa.UUID(), nullable=True),
        sa.Column("decided_by_email", sa.String(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('awaiting', 'approved', 'rejected', 'cancelled')",
            name=op.f("ck_payout_batch_drafts_status"),
        ),
        sa.ForeignKeyConstraint(
            ["merchant_id"],
            ["merchants.id"],
            name=op.f("fk_payout_batch_drafts_merchant_id_merchants"),
        ),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_payout_batch_drafts_created_by_users")
        ),
        sa.ForeignKeyConstraint(
            ["decided_by"], ["users.id"], name=op.f("fk_payout_batch_drafts_decided_by_users")
        ),
        sa.PrimaryKeyConstraint("reference", name=op.f("pk_payout_batch_drafts")),
    )
    op.create_index(
        "ix_payout_batch_drafts_list",
        "payout_batch_drafts",
        ["merchant_id", "status", "created_at"],
    )
    # The same file sent twice while its draft awaits is that draft; once decided, it may be
    # sent again.
    op.create_index(
        "uq_payout_batch_drafts_awaiting",
        "payout_batch_drafts",
        ["merchant_id", "external_id"],
        unique=True,
        postgresql_where=sa.text("status = 'awaiting'"),
    )


def downgrade() -> None:
    op.drop_index("uq_payout_batch_drafts_awaiting", table_name="payout_batch_drafts")
    op.drop_index("ix_payout_batch_drafts_list", table_name="payout_batch_drafts")
    op.drop_table("payout_batch_drafts")
