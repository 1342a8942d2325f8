"""A payout draft's external_id: the dashboard's form sent twice is one draft (issue 26,
review)

Revision ID: 0035_draft_external_id
Revises: 0034_ledger_by_time
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0035_draft_external_id"
down_revision: str | None = "0034_ledger_by_time"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("payout_drafts", sa.Column("external_id", sa.String(), nullable=True))
    op.execute("UPDATE payout_drafts SET external_id = reference")
    op.alter_column("payout_drafts", "external_id", nullable=False)
    op.create_unique_constraint(
        op.f("uq_payout_drafts_merchant_id"), "payout_drafts", ["merchant_id", "external_id"]
    )


def downgrade() -> None:
    op.drop_constraint(op.f("uq_payout_drafts_merchant_id"), "payout_drafts", type_="unique")
    op.drop_column("payout_drafts", "external_id")
