"""What merchants owe (issue 28): their receivable accounts' postings by an index of their
own, so that the console's discrepancy queue lists them without reading the whole ledger.
Built without blocking writes.

Revision ID: 0040_receivables_index
Revises: 0039_payout_batch_drafts
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0040_receivables_index"
down_revision: str | None = "0039_payout_batch_drafts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS ix_ledger_postings_receivable "
            "ON ledger_postings (account) INCLUDE (currency, amount) "
            "WHERE account LIKE 'merchant:%:receivable:%'"
        )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_ledger_postings_receivable")
