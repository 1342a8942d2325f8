"""The staff's view of the ledger: every account's balance, and the reconciliation check
(cauri.ledger.reconciliation) run on demand and kept with its date and result
(`reconciliations`), so that the last one can be shown."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.ledger import reconciliation as ledger_check
from cauri.ledger.reconciliation import AccountBalance
from cauri.models import Reconciliation

# Discrepancies kept per check: enough to start looking, bounded whatever is wrong.
KEPT = 20


async def balances(session: AsyncSession) -> Sequence[AccountBalance]:
    """Merchants' balances per currency and environment, their plans' escrows, platform
    revenue (fees, plan fees, penalties), top-up sources and operators' clearing accounts."""
    return await ledger_check.account_balances(session)


async def check(session: AsyncSession, now: datetime) -> Reconciliation:
    """Runs the check and records its result."""
    started = time.monotonic()
    findings = await ledger_check.check(session, KEPT)
    result = Reconciliation(
        checked_at=now,
        duration_ms=round((time.monotonic() - started) * 1000),
        passed=findings.passed,
        transactions=findings.transactions,
        postings=findings.postings,
        accounts=findings.accounts,
        counts=findings.counts,
        discrepancies=[found.as_dict() for found in findings.first],
    )
    session.add(result)
    await session.flush()
    return result


async def latest(session: AsyncSession) -> Reconciliation | None:
    return await session.scalar(
        select(Reconciliation)
        .order_by(Reconciliation.checked_at.desc(), Reconciliation.id.desc())
        .limit(1)
    )
