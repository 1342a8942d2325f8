"""The API's refusals of each merchant's requests, for its developers (issue 26)

Revision ID: 0032_api_errors
Revises: 0031_payout_drafts
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0032_api_errors"
down_revision: str | None = "0031_payout_drafts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_errors",
        sa.Column("id", sa.BigInteger(), sa.Identity(), nullable=False),
        sa.Column("merchant_id", sa.String(), nullable=False),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("method", sa.String(), nullable=False),
        sa.Column("route", sa.String(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["merchant_id"],
            ["merchants.id"],
            name=op.f("fk_api_errors_merchant_id_merchants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_errors")),
    )
    op.create_index(
        "ix_api_errors_latest", "api_errors", ["merchant_id", "livemode", "id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_api_errors_latest", table_name="api_errors")
    op.drop_table("api_errors")
