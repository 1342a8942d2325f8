"""connector_accounts and operator_routes: live money's connectors, configured by the staff

Revision ID: 0010_connectors
Revises: 0009_operations
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010_connectors"
down_revision: str | None = "0009_operations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "connector_accounts",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("environment", sa.String(), nullable=False),
        sa.Column("base_url", sa.String(), nullable=False),
        sa.Column("settings", postgresql.JSONB(), nullable=False),
        sa.Column("secret_names", postgresql.ARRAY(sa.String()), nullable=False),
        sa.Column("secrets", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_connector_accounts")),
        sa.CheckConstraint(
            "environment IN ('sandbox', 'production')",
            name=op.f("ck_connector_accounts_environment"),
        ),
    )
    op.create_table(
        "operator_routes",
        sa.Column("operator", sa.String(), nullable=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("connector", sa.String(), nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("operator", "action", name=op.f("pk_operator_routes")),
        sa.ForeignKeyConstraint(
            ["connector"],
            ["connector_accounts.name"],
            name=op.f("fk_operator_routes_connector_connector_accounts"),
        ),
        sa.CheckConstraint(
            "action IN ('collect', 'disburse', 'refund')", name=op.f("ck_operator_routes_action")
        ),
        sa.CheckConstraint(
            "operator = lower(operator)", name=op.f("ck_operator_routes_operator_lower_case")
        ),
    )
    op.create_index(
        op.f("ix_operator_routes_connector"), "operator_routes", ["connector"], unique=False
    )


def downgrade() -> None:
    op.drop_table("operator_routes")
    op.drop_table("connector_accounts")
