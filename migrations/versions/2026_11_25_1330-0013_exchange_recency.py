"""operator_exchanges: an index on (connector, created_at), for the availability of routes
(the failure rate of a connector's recent exchanges, cauri.calls.availability)

Revision ID: 0013_exchange_recency
Revises: 0012_connector_checks
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0013_exchange_recency"
down_revision: str | None = "0012_connector_checks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_operator_exchanges_connector_created",
        "operator_exchanges",
        ["connector", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_operator_exchanges_connector_created", table_name="operator_exchanges")
