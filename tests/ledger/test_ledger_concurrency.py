"""Hundreds of simultaneous debits and credits on one balance (DESIGN invariant 3): no
overdraft, nothing lost, no deadlock. Each operation is its own session and transaction."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from cauri.kit.db import make_sessionmaker, unit_of_work
from cauri.ledger.service import Overdraft, balance
from tests.ledger.builders import (
    Sessions,
    credit,
    debit,
    debit_entries,
    fresh_account,
    head,
    postings,
    record,
    rows,
)

DEBITS = 200
DEBIT = 1_000


@pytest.fixture
async def sessions(database_url: str) -> AsyncIterator[Sessions]:
    """Its own engine, so that 20 transactions at a time contend for the row lock while the
    shared one keeps its connections. Not more: the test server (max_connections 100) is
    shared by parallel test sessions; the other operations queue for a connection."""
    engine = create_async_engine(database_url, pool_size=20, max_overflow=0, pool_timeout=120)
    yield make_sessionmaker(engine)
    await engine.dispose()


async def _outcomes(operations: list[Coroutine[Any, Any, None]]) -> list[BaseException | None]:
    results = await asyncio.gather(*operations, return_exceptions=True)
    unexpected = [r for r in results if r is not None and not isinstance(r, Overdraft)]
    assert not unexpected, unexpected[:3]  # no deadlock, no serialization failure
    return results


async def test_simultaneous_debits_take_exactly_what_the_balance_covers(
    sessions: Sessions,
) -> None:
    account = fresh_account()
    initial = 137 * DEBIT + 500
    for _ in range(5):  # left unfolded: the first debit folds them
        await credit(sessions, account, initial // 5)

    results = await _outcomes([debit(sessions, account, DEBIT) for _ in range(DEBITS)])

    succeeded = results.count(None)
    refusals = [r for r in results if isinstance(r, Overdraft)]
    assert succeeded == initial // DEBIT == 137
    assert len(refusals) == DEBITS - 137
    # Each refusal saw a balance that truly could not cover: none was refused too early.
    assert all(0 <= r.balance < DEBIT for r in refusals)
    async with sessions() as session:
        assert await balance(session, account) == initial - succeeded * DEBIT == 500
    assert await head(sessions, account) == 500
    amounts = [amount for amount, _ in await postings(sessions, account)]
    assert amounts.count(-DEBIT) == succeeded


async def test_credits_during_debits_are_neither_lost_nor_overdrawn(sessions: Sessions) -> None:
    account = fresh_account()
    initial, credits = 50 * DEBIT, 100
    await credit(sessions, account, initial)
    operations = [debit(sessions, account, DEBIT) for _ in range(DEBITS)]
    operations += [credit(sessions, account, DEBIT) for _ in range(credits)]
    random.Random(7).shuffle(operations)

    results = await _outcomes(operations)

    succeeded = results.count(None) - credits
    assert 50 <= succeeded <= 150
    assert all(0 <= r.balance < DEBIT for r in results if isinstance(r, Overdraft))
    remaining = initial + credits * DEBIT - succeeded * DEBIT
    async with sessions() as session:
        assert await balance(session, account) == remaining >= 0
    # Every credit, whatever order it committed in, is folded by the next debit (the extra
    # unit makes that debit possible when the debits took everything).
    await credit(sessions, account, 1)
    await debit(sessions, account, remaining + 1)
    assert await head(sessions, account) == 0
    assert all(folded for _, folded in await postings(sessions, account))


async def _until_a_debit_waits_for_a_lock(sessions: Sessions) -> None:
    for _ in range(500):
        waiting = await rows(
            sessions,
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query LIKE '%ledger_debit%'",
        )
        if waiting[0][0]:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the second debit never waited for the lock")


async def test_a_debit_counts_the_credits_committed_while_it_waited_for_the_lock(
    sessions: Sessions,
) -> None:
    """The debit's statement began before the credit committed, but its fold and its check
    run once the lock is granted, each on a fresh snapshot (`ledger_debit`): the credit is
    counted, so the debit is not refused with the money there."""
    account = fresh_account()
    await credit(sessions, account, 100)
    async with unit_of_work(sessions) as holder:
        await record(holder, debit_entries(account, 100))  # the lock, until this commits
        waiting = asyncio.create_task(debit(sessions, account, 50))
        await _until_a_debit_waits_for_a_lock(sessions)
        await credit(sessions, account, 50)
    await waiting  # raises Overdraft if the credit was not seen
    assert await head(sessions, account) == 0
    assert [amount for amount, _ in await postings(sessions, account)] == [100, -100, 50, -50]
    assert all(folded for _, folded in await postings(sessions, account))
