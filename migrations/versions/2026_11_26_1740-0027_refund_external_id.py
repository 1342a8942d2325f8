"""Refunds take an external_id, idempotent per account and environment (issue 23)

A refund retried after a timeout was a second refund; as for payments and payouts, a unique
index on (merchant_id, livemode, external_id) makes the retry find the first one.

Revision ID: 0027_refund_external_id
Revises: 0026_audit_chain
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027_refund_external_id"
down_revision: str | None = "0026_audit_chain"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("refunds", sa.Column("external_id", sa.String(), nullable=True))
    op.create_index(
        "uq_refunds_external_id",
        "refunds",
        ["merchant_id", "livemode", "external_id"],
        unique=True,
        postgresql_where=sa.text("external_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("uq_refunds_external_id", table_name="refunds")
    op.drop_column("refunds", "external_id")
