"""webhook_deliveries

Revision ID: 0004_webhooks
Revises: 0003_payouts
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0004_webhooks"
down_revision: str | None = "0003_payouts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
