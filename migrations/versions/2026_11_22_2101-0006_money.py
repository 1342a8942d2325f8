"""fixed fees per currency; a merchant's fee rule is whole

Revision ID: 0006_money
Revises: 0005_lanes
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_money"
down_revision: str | None = "0005_lanes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ZERO = {"server_default": "0", "nullable": False}
PLAN_FEE_CHECK = "ck_platform_settings_plan_fee_fixed_or_percent"


def upgrade() -> None:
    for column in ("fee_fixed", "payout_fee_fixed"):
        for currency in ("eur", "usd"):
            op.add_column(
                "platform_settings", sa.Column(f"{column}_{currency}", sa.BigInteger(), **_ZERO)
            )
    for currency in ("eur", "usd"):
        op.add_column(
            "platform_settings",
            sa.Column(f"plan_creation_fee_fixed_{currency}", sa.BigInteger(), nullable=True),
        )
        op.add_column("fee_rules", sa.Column(f"fixed_{currency}", sa.BigInteger(), **_ZERO))
    op.drop_constraint(op.f(PLAN_FEE_CHECK), "platform_settings", type_="check")
    op.create_check_constraint(
        op.f(PLAN_FEE_CHECK),
        "platform_settings",
        "plan_creation_fee_percent IS NULL OR (plan_creation_fee_fixed IS NULL "
        "AND plan_creation_fee_fixed_eur IS NULL AND plan_creation_fee_fixed_usd IS NULL)",
    )
    # A rule's unset part used to mean the platform's default: it keeps the default in force
    # now, so that no account's fees change with this migration.
    op.execute(
        "UPDATE fee_rules r SET "
        "percent = coalesce(r.percent, (SELECT CASE WHEN r.mode = 'payout' "
        "  THEN s.payout_fee_percent ELSE s.fee_percent END FROM platform_settings s), 0), "
        "fixed = coalesce(r.fixed, (SELECT CASE WHEN r.mode = 'payout' "
        "  THEN s.payout_fee_fixed ELSE s.fee_fixed END FROM platform_settings s), 0)"
    )
    op.alter_column("fee_rules", "percent", nullable=False)
    op.alter_column("fee_rules", "fixed", nullable=False)


def downgrade() -> None:
    op.alter_column("fee_rules", "fixed", nullable=True)
    op.alter_column("fee_rules", "percent", nullable=True)
    op.drop_constraint(op.f(PLAN_FEE_CHECK), "platform_settings", type_="check")
    op.create_check_constraint(
        op.f(PLAN_FEE_CHECK),
        "platform_settings",
        "plan_creation_fee_fixed IS NULL OR plan_creation_fee_percent IS NULL",
    )
    for currency in ("eur", "usd"):
        op.drop_column("fee_rules", f"fixed_{currency}")
        op.drop_column("platform_settings", f"plan_creation_fee_fixed_{currency}")
        for column in ("fee_fixed", "payout_fee_fixed"):
            op.drop_column("platform_settings", f"{column}_{currency}")
