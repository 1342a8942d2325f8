"""installment_plans

Revision ID: 0002_plans
Revises: 4484e7deef89
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0002_plans"
down_revision: str | None = "4484e7deef89"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
