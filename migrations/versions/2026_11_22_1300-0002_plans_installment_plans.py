"""installment_plans

Revision ID: 0002_plans
Revises: 4484e7deef89
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_plans"
down_revision: str | None = "4484e7deef89"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "installment_plans",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("merchant_id", sa.String(), nullable=False),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("external_id", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("description", sa.String(), nullable=True),
        sa.Column("currency", sa.String(), nullable=False),
        sa.Column("target_amount", sa.BigInteger(), nullable=False),
        sa.Column("creation_fee_amount", sa.BigInteger(), nullable=False),
        sa.Column("cancellation_penalty_percent", sa.Numeric(precision=7, scale=4), nullable=False),
        sa.Column("paid_amount", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column(
            "creation_fee_paid", sa.Boolean(), server_default=sa.text("false"), nullable=False
        ),
        sa.Column("cancellation_reason", sa.String(), nullable=True),
        sa.Column("refund_amount", sa.BigInteger(), nullable=True),
        sa.Column("penalty_amount", sa.BigInteger(), nullable=True),
        sa.Column("refund_operator", sa.String(), nullable=True),
        sa.Column("refund_phone_number", sa.String(), nullable=True),
        sa.Column("refund_failure_reason", sa.String(), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("cancelled_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('pending', 'succeeded', 'refunded', 'failed')",
            name=op.f("ck_installment_plans_status"),
        ),
        sa.CheckConstraint(
            "paid_amount BETWEEN 0 AND target_amount",
            name=op.f("ck_installment_plans_paid_within_target"),
        ),
        sa.ForeignKeyConstraint(
            ["merchant_id"],
            ["merchants.id"],
            name=op.f("fk_installment_plans_merchant_id_merchants"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_installment_plans")),
    )
    op.create_index(
        "ix_installment_plans_list",
        "installment_plans",
        ["merchant_id", "livemode", "created_at"],
        unique=False,
    )
    op.create_index(
        "uq_installment_plans_external_id",
        "installment_plans",
        ["merchant_id", "livemode", "external_id"],
        unique=True,
        postgresql_where=sa.text("external_id IS NOT NULL"),
    )
    op.add_column("payments", sa.Column("plan_id", sa.UUID(), nullable=True))
    op.add_column(
        "payments",
        sa.Column("plan_fee_amount", sa.BigInteger(), server_default="0", nullable=False),
    )
    op.create_foreign_key(
        op.f("fk_payments_plan_id_installment_plans"),
        "payments",
        "installment_plans",
        ["plan_id"],
        ["id"],
    )
    op.create_index(
        "ix_payments_plan",
        "payments",
        ["plan_id"],
        unique=False,
        postgresql_where=sa.text("plan_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_payments_plan", table_name="payments", postgresql_where=sa.text("plan_id IS NOT NULL")
    )
    op.drop_constraint(
        op.f("fk_payments_plan_id_installment_plans"), "payments", type_="foreignkey"
    )
    op.drop_column("payments", "plan_fee_amount")
    op.drop_column("payments", "plan_id")
    op.drop_index(
        "uq_installment_plans_external_id",
        table_name="installment_plans",
        postgresql_where=sa.text("external_id IS NOT NULL"),
    )
    op.drop_index("ix_installment_plans_list", table_name="installment_plans")
    op.drop_table("installment_plans")
