"""the double entry, enforced by the database (issue 23)

Until now only the code (`cauri.ledger.service`) kept every ledger transaction at zero per
currency; a statement written by hand, or a bug past that check, could leave money made
from nothing. Now PostgreSQL refuses it too, as the last line of defence:

- ledger_postings_balanced: a constraint trigger, deferred to the commit, after each
  posting inserted. It sums the postings of that posting's transaction in its currency
  (ix_ledger_postings_transaction: the transaction's few rows) and fails the commit when
  the sum is not zero (SQLSTATE 23514 check_violation, the trigger's name as constraint):
  then nothing the transaction wrote stays. Deferred, so that a transaction's postings may
  be written in several statements; a statement run on its own (autocommit, the hot
  paths' one-statement writes) is its own transaction, checked when it ends.
- ledger_postings_append_only (and _no_truncate): postings are never deleted, and their
  transaction, account, currency and amount never change (a correction is a reversal, its
  own transaction), so that a balanced transaction stays balanced (SQLSTATE 42501, as the
  audit log's refusal).
  `folded` still changes: the guarded debit's fold (DESIGN invariant 3).

A superuser gets past both with `session_replication_role = replica` (the tests' cleanup,
the reconciliation check's tampering tests): what `cauri ledger check` is for.

Revision ID: 0022_ledger_zero_sum
Revises: 0021_ledger_debit_plans
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0022_ledger_zero_sum"
down_revision: str | None = "0021_ledger_debit_plans"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A transaction's postings in one currency are checked once per posting: a payment or a
# payout appends three, so three index scans of three rows at commit (about 0.15 ms of
# PostgreSQL's CPU per payment). A check per ledger transaction (on `ledger_transactions`)
# would not see postings added later to an older one; a check per statement would refuse a
# transaction written over several statements: both are cheaper (bench/README.md, issue 23).
_BALANCED = """
CREATE FUNCTION ledger_postings_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    off bigint;
BEGIN
    SELECT sum(p.amount) INTO off FROM ledger_postings p
    WHERE p.transaction_id = NEW.transaction_id AND p.currency = NEW.currency;
    IF off <> 0 THEN
        RAISE EXCEPTION 'ledger: transaction % does not sum to zero in % (%)',
            NEW.transaction_id, NEW.currency, off
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_postings_balanced',
                HINT = 'Every ledger transaction''s postings sum to zero per currency.';
    END IF;
    RETURN NULL;
END
$$
"""

_APPEND_ONLY = """
CREATE FUNCTION ledger_postings_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger_postings is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
            HINT = 'A correction is a reversal: a balanced transaction of its own.';
END
$$
"""


def upgrade() -> None:
    op.execute(_BALANCED)
    op.execute(
        "CREATE CONSTRAINT TRIGGER ledger_postings_balanced AFTER INSERT ON ledger_postings "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_postings_balanced()"
    )
    op.execute(_APPEND_ONLY)
    op.execute(
        "CREATE TRIGGER ledger_postings_append_only "
        "BEFORE UPDATE OF transaction_id, account, currency, amount OR DELETE "
        "ON ledger_postings FOR EACH ROW EXECUTE FUNCTION ledger_postings_append_only()"
    )
    op.execute(
        "CREATE TRIGGER ledger_postings_no_truncate BEFORE TRUNCATE ON ledger_postings "
        "FOR EACH STATEMENT EXECUTE FUNCTION ledger_postings_append_only()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER ledger_postings_no_truncate ON ledger_postings")
    op.execute("DROP TRIGGER ledger_postings_append_only ON ledger_postings")
    op.execute("DROP FUNCTION ledger_postings_append_only()")
    op.execute("DROP TRIGGER ledger_postings_balanced ON ledger_postings")
    op.execute("DROP FUNCTION ledger_postings_balanced()")
