"""late_instalment_refunds

A refund may be paid from a plan's escrow: an instalment that succeeded after its plan's
cancellation began is refunded in full from there (refunds.plan_id).

Revision ID: 0007_plans
Revises: 0006_money
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_plans"
down_revision: str | None = "0006_money"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("refunds", sa.Column("plan_id", sa.UUID(), nullable=True))
    op.create_foreign_key(
        op.f("fk_refunds_plan_id_installment_plans"),
        "refunds",
        "installment_plans",
        ["plan_id"],
        ["id"],
    )


def downgrade() -> None:
    op.drop_constraint(op.f("fk_refunds_plan_id_installment_plans"), "refunds", type_="foreignkey")
    op.drop_column("refunds", "plan_id")
