"""money_approvals: live money actions waiting for a second person (issue 23)

Credits and failed plans' resolutions above the platform's `payout_dual_approval_above`, and
a raise or an unset of that amount, are asked by one person and done on a second one's
approval (cauri.staff.approvals). Payouts keep their own approvals (payout_approvals).

Revision ID: 0023_money_approvals
Revises: 0022_ledger_zero_sum
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0023_money_approvals"
down_revision: str | None = "0022_ledger_zero_sum"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "money_approvals",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("subject", sa.String(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=True),
        sa.Column("currency", sa.String(), nullable=False),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("params", postgresql.JSONB(), nullable=False),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("requested_by", sa.String(), nullable=False),
        sa.Column("requested_by_name", sa.String(), nullable=False),
        sa.Column("requested_staff_account_id", postgresql.UUID(as_uuid=True), nullable=True),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by", sa.String(), nullable=True),
        sa.Column("decided_by_name", sa.String(), nullable=True),
        sa.Column("decided_staff_account_id", postgresql.UUID(as_uuid=True), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'approved', 'rejected')", name=op.f("ck_money_approvals_status")
        ),
        sa.CheckConstraint(
            "status = 'pending' OR (decided_by IS NOT NULL AND decided_at IS NOT NULL)",
            name=op.f("ck_money_approvals_decided"),
        ),
    )
    op.create_index("ix_money_approvals_pending", "money_approvals", ["status", "requested_at"])


def downgrade() -> None:
    op.drop_table("money_approvals")
