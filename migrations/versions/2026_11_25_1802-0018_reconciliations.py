"""ledger reconciliation checks and their results (issue 14)

- reconciliations: each run of the ledger's check (`cauri ledger check`), its counts and its
  first discrepancies.
- ledger_transactions.reference indexed: a resource's transactions on the staff's detail
  pages and the settlement dates of exports, without scanning the ledger.
- the staff's search by the last digits of a number: each phone column indexed reversed, in
  the "C" collation, so that "ends with 1234" is a range of the index ("4321" <= key <
  "4322"), a plain comparison that any query plan uses (a LIKE pattern needs its value known
  when planned).

Revision ID: 0018_reconciliations
Revises: 0017_audit
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0018_reconciliations"
down_revision: str | None = "0017_audit"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (index, table): the number a search by last digits reads.
_PHONE_SUFFIXES = (
    ("ix_payments_phone_suffix", "payments"),
    ("ix_payouts_phone_suffix", "payouts"),
    ("ix_refunds_phone_suffix", "refunds"),
)


def upgrade() -> None:
    op.create_table(
        "reconciliations",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("transactions", sa.BigInteger(), nullable=False),
        sa.Column("postings", sa.BigInteger(), nullable=False),
        sa.Column("accounts", sa.BigInteger(), nullable=False),
        sa.Column("counts", postgresql.JSONB(), nullable=False),
        sa.Column("discrepancies", postgresql.JSONB(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reconciliations")),
    )
    op.create_index("ix_reconciliations_checked_at", "reconciliations", ["checked_at"])
    op.create_index("ix_ledger_transactions_reference", "ledger_transactions", ["reference"])
    for name, table in _PHONE_SUFFIXES:
        op.create_index(
            name,
            table,
            [sa.text('(reverse(phone_number) COLLATE "C")')],
            postgresql_where=sa.text("phone_number IS NOT NULL"),
        )


def downgrade() -> None:
    for name, table in _PHONE_SUFFIXES:
        op.drop_index(name, table_name=table)
    op.drop_index("ix_ledger_transactions_reference", table_name="ledger_transactions")
    op.drop_index("ix_reconciliations_checked_at", table_name="reconciliations")
    op.drop_table("reconciliations")
