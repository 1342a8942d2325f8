"""Payouts of a merchant's team awaiting a second member's approval, above its owner's
threshold (issue 26)

Revision ID: 0031_payout_drafts
Revises: 0030_member_actor
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0031_payout_drafts"
down_revision: str | None = "0030_member_actor"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("merchants", sa.Column("team_approval_above", sa.BigInteger(), nullable=True))
    op.create_table(
        "payout_drafts",
        sa.Column("reference", sa.String(), nullable=False),
        sa.Column("merchant_id", sa.String(), nullable=False),
        sa.Column("request", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("fee_amount", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(), nullable=False),
        sa.Column("operator", sa.String(), nullable=False),
        sa.Column("phone_number", sa.String(), nullable=False),
        sa.Column("third_party", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("created_by", sa.UUID(), nullable=False),
        sa.Column("created_by_email", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by", sa.UUID(), nullable=True),
        sa.Column("decided_by_email", sa.String(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('awaiting', 'approved', 'rejected', 'cancelled')",
            name=op.f("ck_payout_drafts_status"),
        ),
        sa.ForeignKeyConstraint(
            ["merchant_id"], ["merchants.id"], name=op.f("fk_payout_drafts_merchant_id_merchants")
        ),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_payout_drafts_created_by_users")
        ),
        sa.ForeignKeyConstraint(
            ["decided_by"], ["users.id"], name=op.f("fk_payout_drafts_decided_by_users")
        ),
        sa.PrimaryKeyConstraint("reference", name=op.f("pk_payout_drafts")),
    )
    op.create_index(
        "ix_payout_drafts_list",
        "payout_drafts",
        ["merchant_id", "status", "created_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_payout_drafts_list", table_name="payout_drafts")
    op.drop_table("payout_drafts")
    op.drop_column("merchants", "team_approval_above")
