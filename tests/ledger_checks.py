"""Ledger reconciliation, asserted after every test (DESIGN invariants 2 and 3)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

UNBALANCED = text(
    "SELECT transaction_id, currency, sum(amount) FROM ledger_postings "
    "GROUP BY transaction_id, currency HAVING sum(amount) <> 0"
)
# External accounts (operator clearing, top-up sources) are the only ones that go negative.
OVERDRAWN = text(
    "SELECT account, sum(amount) FROM ledger_postings "
    "WHERE account NOT LIKE 'operator:%:clearing:%' AND account NOT LIKE 'platform:topups:%' "
    "GROUP BY account HAVING sum(amount) < 0"
)
STALE_HEADS = text(
    "SELECT a.code, a.balance, coalesce(sum(p.amount) FILTER (WHERE p.folded), 0) "
    "FROM ledger_accounts a LEFT JOIN ledger_postings p ON p.account = a.code "
    "GROUP BY a.code, a.balance "
    "HAVING a.balance <> coalesce(sum(p.amount) FILTER (WHERE p.folded), 0)"
)


async def assert_ledger_reconciles(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        unbalanced = (await connection.execute(UNBALANCED)).all()
        overdrawn = (await connection.execute(OVERDRAWN)).all()
        stale = (await connection.execute(STALE_HEADS)).all()
    assert not unbalanced, f"unbalanced ledger transactions: {unbalanced}"
    assert not overdrawn, f"overdrawn guarded accounts: {overdrawn}"
    assert not stale, f"account heads disagree with their folded postings: {stale}"
