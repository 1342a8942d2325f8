"""payouts_and_refunds

Revision ID: 0003_payouts
Revises: 0002_plans
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0003_payouts"
down_revision: str | None = "0002_plans"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
