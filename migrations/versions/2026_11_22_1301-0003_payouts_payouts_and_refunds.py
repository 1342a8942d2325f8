"""payouts_and_refunds

Revision ID: 0003_payouts
Revises: 0002_plans
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003_payouts"
down_revision: str | None = "0002_plans"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "payouts",
        sa.Column("reference", sa.String(), nullable=False),
        sa.Column("merchant_id", sa.String(), nullable=False),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("external_id", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("fee_amount", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(), nullable=False),
        sa.Column("operator", sa.String(), nullable=False),
        sa.Column("phone_number", sa.String(), nullable=False),
        sa.Column("third_party", sa.Boolean(), nullable=False),
        sa.Column("beneficiary_name", sa.String(), nullable=True),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("metadata", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("approval", sa.String(), nullable=True),
        sa.Column("debited", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("operator_reference", sa.String(), nullable=True),
        sa.Column("failure_reason", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'succeeded', 'failed')", name=op.f("ck_payouts_status")
        ),
        sa.CheckConstraint(
            "approval IN ('required', 'approved', 'rejected')", name=op.f("ck_payouts_approval")
        ),
        sa.ForeignKeyConstraint(
            ["merchant_id"], ["merchants.id"], name=op.f("fk_payouts_merchant_id_merchants")
        ),
        sa.PrimaryKeyConstraint("reference", name=op.f("pk_payouts")),
    )
    op.create_index(
        "ix_payouts_list", "payouts", ["merchant_id", "livemode", "created_at"], unique=False
    )
    op.create_index(
        "uq_payouts_external_id",
        "payouts",
        ["merchant_id", "livemode", "external_id"],
        unique=True,
        postgresql_where=sa.text("external_id IS NOT NULL"),
    )
    op.create_table(
        "refunds",
        sa.Column("reference", sa.String(), nullable=False),
        sa.Column("payment_id", sa.UUID(), nullable=False),
        sa.Column("merchant_id", sa.String(), nullable=False),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(), nullable=False),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("operator", sa.String(), nullable=False),
        sa.Column("phone_number", sa.String(), nullable=False),
        sa.Column("operator_reference", sa.String(), nullable=True),
        sa.Column("failure_reason", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'succeeded', 'failed')", name=op.f("ck_refunds_status")
        ),
        sa.ForeignKeyConstraint(
            ["merchant_id"], ["merchants.id"], name=op.f("fk_refunds_merchant_id_merchants")
        ),
        sa.ForeignKeyConstraint(
            ["payment_id"], ["payments.id"], name=op.f("fk_refunds_payment_id_payments")
        ),
        sa.PrimaryKeyConstraint("reference", name=op.f("pk_refunds")),
    )
    op.create_index(
        "ix_refunds_merchant", "refunds", ["merchant_id", "livemode", "created_at"], unique=False
    )
    op.create_index(
        "uq_refunds_payment_id",
        "refunds",
        ["payment_id"],
        unique=True,
        postgresql_where=sa.text("status <> 'failed'"),
    )


def downgrade() -> None:
    op.drop_index(
        "uq_refunds_payment_id",
        table_name="refunds",
        postgresql_where=sa.text("status <> 'failed'"),
    )
    op.drop_index("ix_refunds_merchant", table_name="refunds")
    op.drop_table("refunds")
    op.drop_index(
        "uq_payouts_external_id",
        table_name="payouts",
        postgresql_where=sa.text("external_id IS NOT NULL"),
    )
    op.drop_index("ix_payouts_list", table_name="payouts")
    op.drop_table("payouts")
