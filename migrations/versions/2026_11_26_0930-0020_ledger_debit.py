"""the guarded debit as one server-side call: lock, fold, check, debit (issue 13)

A debit of a guarded account locked its head rows in one statement and folded, checked and
debited in a second, so the lock was held across a round trip and whatever Python ran
between them. In a function, each statement takes a fresh snapshot (a VOLATILE function's
rule), so the fold after the lock still sees every posting committed before it was
granted, and a caller's statement can lock, debit and append in one round trip: the lock is
then held for that statement and its commit, as PostgreSQL alone would hold it.

Revision ID: 0020_ledger_debit
Revises: 0019_job_claims
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0020_ledger_debit"
down_revision: str | None = "0019_job_claims"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Heads are guarded accounts: never negative. Several are all made before any is locked,
# so that they are locked in code order (no deadlock between two debits: a head made after
# others are locked would wait for whoever made it uncommitted); one is made only when it
# is missing. COLLATE "C": the byte order Python sorts the codes in. The fold and the debit
# are one assignment per head row: a row updated twice in one statement keeps one change.
# Not covered: the fold is kept (the balance is unchanged), nothing is debited, and with
# `refuse` the statement that called it fails (SQLSTATE C0402) so that nothing it wrote
# stays either. `written` runs unreferenced, as every data-modifying CTE does.
_CREATE = """
CREATE FUNCTION ledger_debit(
    codes text[], currencies text[], livemodes boolean[], amounts bigint[], refuse boolean,
    OUT debited boolean, OUT balances bigint[]
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    locked integer;
BEGIN
    IF cardinality(codes) > 1 THEN
        INSERT INTO ledger_accounts (code, currency, livemode, allow_negative)
        SELECT c, u, l, false FROM unnest(codes, currencies, livemodes) AS n(c, u, l)
        ON CONFLICT (code) DO NOTHING;
    END IF;
    SELECT count(*) INTO locked FROM (
        SELECT 1 FROM ledger_accounts a WHERE a.code = ANY(codes)
        ORDER BY a.code COLLATE "C" FOR UPDATE
    ) AS heads;
    IF locked < cardinality(codes) THEN
        INSERT INTO ledger_accounts (code, currency, livemode, allow_negative)
        SELECT c, u, l, false FROM unnest(codes, currencies, livemodes) AS n(c, u, l)
        ON CONFLICT (code) DO NOTHING;
        PERFORM 1 FROM ledger_accounts a WHERE a.code = ANY(codes)
        ORDER BY a.code COLLATE "C" FOR UPDATE;
    END IF;
    WITH folded AS (
        UPDATE ledger_postings p SET folded = true
        WHERE p.account = ANY(codes) AND NOT p.folded RETURNING p.account, p.amount
    ), sums AS (
        SELECT f.account, sum(f.amount) AS delta FROM folded f GROUP BY f.account
    ), heads AS (
        SELECT d.i, a.code, a.balance + coalesce(s.delta, 0) AS balance, d.amount
        FROM unnest(codes, amounts) WITH ORDINALITY AS d(code, amount, i)
        JOIN ledger_accounts a ON a.code = d.code LEFT JOIN sums s ON s.account = d.code
    ), covered AS (
        SELECT bool_and(h.balance + h.amount >= 0) AND count(*) = cardinality(codes) AS ok
        FROM heads h
    ), written AS (
        UPDATE ledger_accounts a
        SET balance = h.balance + CASE WHEN c.ok THEN h.amount ELSE 0 END
        FROM heads h, covered c WHERE a.code = h.code RETURNING a.code
    )
    SELECT c.ok, (SELECT array_agg(h.balance ORDER BY h.i) FROM heads h)
    INTO debited, balances FROM covered c;
    IF refuse AND NOT debited THEN
        RAISE EXCEPTION 'ledger: % cannot cover %', codes, amounts USING ERRCODE = 'C0402';
    END IF;
END
$$
"""


def upgrade() -> None:
    op.execute(_CREATE)


def downgrade() -> None:
    op.execute("DROP FUNCTION ledger_debit(text[], text[], boolean[], bigint[], boolean)")
