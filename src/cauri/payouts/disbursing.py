"""Money leaving a balance for an operator: payouts and refunds share this.

At initiation the debit and the operator's first answer stand or fall together: the debit
is written in a savepoint, the operator is asked, and a refusal rolls the savepoint back, so
a refused disbursement leaves nothing taken (no debit and reversal pair either). Once the
operator has accepted, a later failure is undone by the reverse transfer.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import InsufficientFunds
from cauri.ledger.service import Entry, Overdraft, transfer
from cauri.operators.protocol import Disbursement, OperatorAdapter, OperatorResult, Outcome


async def debit(
    session: AsyncSession, *, kind: str, reference: str, entries: Sequence[Entry], at: datetime
) -> None:
    """The balance must cover the debit, else 402 insufficient_funds with nothing written."""
    try:
        await transfer(session, kind=kind, reference=reference, entries=entries, at=at)
    except Overdraft as exc:
        raise InsufficientFunds() from exc


async def debit_and_disburse(
    session: AsyncSession,
    adapter: OperatorAdapter,
    disbursement: Disbursement,
    *,
    kind: str,
    entries: Sequence[Entry],
    at: datetime,
) -> OperatorResult:
    """Debits, then asks the operator; on a refusal the debit is undone as if never made.
    Holds the balance's lock across the operator call, so the same balance is never
    promised twice."""
    savepoint = await session.begin_nested()
    try:
        await debit(session, kind=kind, reference=disbursement.reference, entries=entries, at=at)
        result = await adapter.disburse(disbursement)
    except BaseException:
        await savepoint.rollback()
        raise
    if result.outcome is Outcome.FAILED:
        await savepoint.rollback()
    else:
        await savepoint.commit()
    return result


async def reverse(
    session: AsyncSession, *, kind: str, reference: str, entries: Sequence[Entry], at: datetime
) -> None:
    """Undoes a debit that the operator later refused: the balance is re-credited."""
    await transfer(
        session,
        kind=kind,
        reference=reference,
        entries=[Entry(entry.account, -entry.amount) for entry in entries],
        at=at,
    )
