"""operator_operations and operator_exchanges: the live call protocol's records;
refunds.debited: one answer, as for payouts, to whether a refund's money is out

Revision ID: 0009_operations
Revises: 0008_keys
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009_operations"
down_revision: str | None = "0008_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column(
        "refunds",
        sa.Column("debited", sa.Boolean(), server_default=sa.text("false"), nullable=False),
    )
    # Every refund that was not refused had its amount taken, and keeps it out unless failed.
    op.execute("UPDATE refunds SET debited = status <> 'failed'")
    op.create_table(
        "operator_operations",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("connector", sa.String(), nullable=False),
        sa.Column("operator", sa.String(), nullable=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("subject", sa.String(), nullable=False),
        sa.Column("subject_ref", sa.String(), nullable=False),
        sa.Column("request", postgresql.JSONB(), nullable=False),
        sa.Column("status", sa.String(), server_default="pending", nullable=False),
        sa.Column("sent", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("operator_reference", sa.String(), nullable=True),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("polls", sa.Integer(), server_default="0", nullable=False),
        sa.Column("review_required_at", _TS, nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.Column("settled_at", _TS, nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'succeeded', 'failed')",
            name=op.f("ck_operator_operations_status"),
        ),
    )
    op.create_index(
        "uq_operator_operations_subject",
        "operator_operations",
        ["subject", "subject_ref", "action"],
        unique=True,
    )
    op.create_index(
        "ix_operator_operations_review",
        "operator_operations",
        ["review_required_at"],
        postgresql_where=sa.text("review_required_at IS NOT NULL AND status = 'pending'"),
    )
    op.create_table(
        "operator_exchanges",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column(
            "operation_id",
            postgresql.UUID(as_uuid=True),
            sa.ForeignKey("operator_operations.id"),
            nullable=True,
        ),
        sa.Column("connector", sa.String(), nullable=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("method", sa.String(), nullable=False),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("request_body", sa.String(), nullable=True),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_body", sa.String(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("error", sa.String(), nullable=True),
        sa.Column("created_at", _TS, nullable=False),
    )
    op.create_index("ix_operator_exchanges_operation", "operator_exchanges", ["operation_id", "id"])


def downgrade() -> None:
    op.drop_table("operator_exchanges")
    op.drop_table("operator_operations")
    op.drop_column("refunds", "debited")
