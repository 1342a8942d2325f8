"""Ledger reconciliation, asserted after every test (DESIGN invariants 2 and 3): the check
the staff run (`cauri ledger check`), cauri.ledger.reconciliation."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from cauri.ledger.reconciliation import check


async def assert_ledger_reconciles(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        findings = await check(connection)
    assert findings.passed, (
        f"the ledger does not reconcile {findings.counts}: "
        f"{[found.as_dict() for found in findings.first]}"
    )
