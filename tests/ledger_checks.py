"""Ledger reconciliation, asserted after every test (DESIGN invariants 2 and 3): the check
the staff run (`cauri ledger check`), cauri.ledger.reconciliation; and the operators'
clearing accounts left with nothing for an operation carried out (what its domain booked
there is what the connector account's wallet took from it: cauri.ledger.movements.carried)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from cauri.ledger.reconciliation import check

_CLEARING_LEFT = text(
    "SELECT t.reference, sum(p.amount) FROM ledger_transactions t "
    "JOIN ledger_postings p ON p.transaction_id = t.id "
    "WHERE p.account LIKE 'operator:%:clearing:%' "
    "  AND t.reference IN (SELECT reference FROM ledger_transactions WHERE kind = 'carried') "
    "GROUP BY t.reference HAVING sum(p.amount) <> 0"
)


async def assert_ledger_reconciles(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        findings = await check(connection)
        left = (await connection.execute(_CLEARING_LEFT)).all()
    assert findings.passed, (
        f"the ledger does not reconcile {findings.counts}: "
        f"{[found.as_dict() for found in findings.first]}"
    )
    assert not left, f"carried out, yet left on a clearing account: {left}"
