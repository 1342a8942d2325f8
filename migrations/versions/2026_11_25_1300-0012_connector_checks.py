"""connector_accounts: the last `cauri connectors check` of each account (when, its verdict,
and what it read of the operator: pawaPay's active configuration, MTN's balances), shown by
`cauri connectors list`

Revision ID: 0012_connector_checks
Revises: 0011_plan_refunds
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0012_connector_checks"
down_revision: str | None = "0011_plan_refunds"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("connector_accounts", sa.Column("checked_at", sa.DateTime(timezone=True)))
    op.add_column("connector_accounts", sa.Column("check_ok", sa.Boolean()))
    op.add_column("connector_accounts", sa.Column("check_detail", sa.Text()))
    op.add_column("connector_accounts", sa.Column("check_facts", JSONB))


def downgrade() -> None:
    for column in ("check_facts", "check_detail", "check_ok", "checked_at"):
        op.drop_column("connector_accounts", column)
