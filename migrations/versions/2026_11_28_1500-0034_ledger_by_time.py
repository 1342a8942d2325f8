"""The ledger read by period (the dashboard's statements, issue 26): an account's postings
by transaction with their amounts, the transactions' ids by time

Revision ID: 0034_ledger_by_time
Revises: 0033_merchant_settings
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0034_ledger_by_time"
down_revision: str | None = "0033_merchant_settings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_ledger_postings_account_transaction",
        "ledger_postings",
        ["account", "transaction_id"],
        postgresql_include=["amount"],
    )
    op.drop_index("ix_ledger_postings_account", table_name="ledger_postings")
    op.create_index(
        "ix_ledger_transactions_created_at",
        "ledger_transactions",
        ["created_at"],
        postgresql_include=["id"],
    )


def downgrade() -> None:
    op.drop_index("ix_ledger_transactions_created_at", table_name="ledger_transactions")
    op.create_index("ix_ledger_postings_account", "ledger_postings", ["account"])
    op.drop_index("ix_ledger_postings_account_transaction", table_name="ledger_postings")
