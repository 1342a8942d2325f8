"""merchant expectations (issue 12): partial refunds, fee bearer, plan resolutions

- refunds: several per payment (the one-per-payment index goes; a plain index stays);
  `payments.amount_refunded` sums the succeeded ones.
- fee bearer: the merchant's setting, copied on each payment when it is created so that a
  later change never alters a payment in flight.
- plans: what went back to the customer (`refunded_amount`), and how the staff resolved a
  plan whose cancellation refund failed; a resolution's refund may follow a succeeded one
  (a late instalment's money left in escrow), so only one plan refund at a time is pending.

Revision ID: 0015_merchant_expectations
Revises: 0014_worker_heartbeats
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_merchant_expectations"
down_revision: str | None = "0014_worker_heartbeats"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index(
        "uq_refunds_payment_id",
        table_name="refunds",
        postgresql_where=sa.text("status <> 'failed'"),
    )
    op.create_index("ix_refunds_payment_id", "refunds", ["payment_id"])
    op.add_column(
        "payments",
        sa.Column("amount_refunded", sa.BigInteger(), server_default="0", nullable=False),
    )
    op.create_check_constraint(
        op.f("ck_payments_refunded_within_amount"),
        "payments",
        "amount_refunded BETWEEN 0 AND amount",
    )
    for table in ("merchants", "payments"):
        op.add_column(
            table,
            sa.Column("fee_bearer", sa.String(), server_default="customer", nullable=False),
        )
        op.create_check_constraint(
            op.f(f"ck_{table}_fee_bearer"), table, "fee_bearer IN ('customer', 'merchant')"
        )
    op.add_column(
        "installment_plans",
        sa.Column("refunded_amount", sa.BigInteger(), server_default="0", nullable=False),
    )
    op.add_column("installment_plans", sa.Column("resolution", sa.String(), nullable=True))
    op.add_column("installment_plans", sa.Column("resolution_reason", sa.String(), nullable=True))
    op.add_column(
        "installment_plans",
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_check_constraint(
        op.f("ck_installment_plans_resolution"),
        "installment_plans",
        "resolution IN ('refunded', 'released_to_merchant')",
    )
    _plan_refunds_unique_while("status = 'pending'")


def _plan_refunds_unique_while(condition: str) -> None:
    op.drop_index("uq_plan_refunds_plan_id", table_name="plan_refunds")
    op.create_index(
        "uq_plan_refunds_plan_id",
        "plan_refunds",
        ["plan_id"],
        unique=True,
        postgresql_where=sa.text(condition),
    )


def downgrade() -> None:
    op.drop_constraint(op.f("ck_installment_plans_resolution"), "installment_plans")
    _plan_refunds_unique_while("status <> 'failed'")
    for column in ("resolved_at", "resolution_reason", "resolution", "refunded_amount"):
        op.drop_column("installment_plans", column)
    for table in ("payments", "merchants"):
        op.drop_constraint(op.f(f"ck_{table}_fee_bearer"), table)
        op.drop_column(table, "fee_bearer")
    op.drop_constraint(op.f("ck_payments_refunded_within_amount"), "payments")
    op.drop_column("payments", "amount_refunded")
    op.drop_index("ix_refunds_payment_id", table_name="refunds")
    op.create_index(
        "uq_refunds_payment_id",
        "refunds",
        ["payment_id"],
        unique=True,
        postgresql_where=sa.text("status <> 'failed'"),
    )
