"""Balanced transactions, overdraft refusals, folding, and credits that lock nothing
(DESIGN invariants 2 and 3)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from cauri.kit.db import unit_of_work
from cauri.ledger import accounts
from cauri.ledger.service import Entry, Overdraft, Unbalanced, balance
from cauri.runtime import Runtime
from tests.ledger.builders import (
    clearing,
    credit,
    credit_entries,
    debit,
    debit_entries,
    fresh_account,
    head,
    postings,
    record,
    transaction_count,
)

XOF = fresh_account("XOF")
EUR = fresh_account("EUR")
LIVE = fresh_account("XOF", livemode=True)


@pytest.mark.parametrize(
    "entries",
    [
        pytest.param([], id="empty"),
        pytest.param([Entry(XOF, 100), Entry(clearing(XOF), -99)], id="sum-not-zero"),
        pytest.param([Entry(XOF, 0), Entry(clearing(XOF), 0)], id="zero-postings"),
        pytest.param(
            [Entry(XOF, 100), Entry(clearing(XOF), -100), Entry(EUR, 0)], id="one-zero-posting"
        ),
        pytest.param([Entry(XOF, 100), Entry(EUR, -100)], id="zero-overall-not-per-currency"),
        pytest.param([Entry(XOF, 100), Entry(clearing(LIVE), -100)], id="mixed-environments"),
    ],
)
async def test_an_unbalanced_transaction_is_refused_and_writes_nothing(
    runtime: Runtime, entries: list[Entry]
) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        with pytest.raises(Unbalanced):
            await record(session, entries)
    assert await transaction_count(runtime.sessionmaker) == 0
    assert await postings(runtime.sessionmaker, XOF) == []


async def test_a_debit_may_take_the_whole_balance_and_not_one_unit_more(runtime: Runtime) -> None:
    account = fresh_account()
    await credit(runtime.sessionmaker, account, 1_000)
    await debit(runtime.sessionmaker, account, 400)
    with pytest.raises(Overdraft) as refused:
        await debit(runtime.sessionmaker, account, 601)
    assert (refused.value.account, refused.value.balance, refused.value.debit) == (
        account,
        600,
        601,
    )
    await debit(runtime.sessionmaker, account, 600)
    async with runtime.sessionmaker() as session:
        assert await balance(session, account) == 0


async def test_an_account_never_credited_cannot_be_debited(runtime: Runtime) -> None:
    account = fresh_account()
    with pytest.raises(Overdraft):
        await debit(runtime.sessionmaker, account, 1)
    assert await transaction_count(runtime.sessionmaker) == 0


async def test_a_refused_debit_writes_nothing_even_if_the_caller_commits(runtime: Runtime) -> None:
    """A service may record a failure in the same transaction (a payout refused for funds):
    the refusal itself must leave no posting and no balance change behind."""
    account = fresh_account()
    await credit(runtime.sessionmaker, account, 300)  # unfolded: the refusal folds it
    async with unit_of_work(runtime.sessionmaker) as session:
        with pytest.raises(Overdraft):
            await record(session, debit_entries(account, 301))
    assert await transaction_count(runtime.sessionmaker) == 1
    assert await postings(runtime.sessionmaker, account) == [(300, True)]
    assert await head(runtime.sessionmaker, account) == 300


async def test_a_debit_of_several_accounts_takes_from_none_when_one_is_short(
    runtime: Runtime,
) -> None:
    rich, poor, payee = fresh_account(), fresh_account(), fresh_account()
    await credit(runtime.sessionmaker, rich, 1_000)
    await credit(runtime.sessionmaker, poor, 10)
    async with runtime.sessionmaker() as session:
        with pytest.raises(Overdraft) as refused:
            await record(session, [Entry(rich, -500), Entry(poor, -20), Entry(payee, 520)])
    assert refused.value.account == poor
    async with runtime.sessionmaker() as session:
        assert [await balance(session, a) for a in (rich, poor, payee)] == [1_000, 10, 0]


async def test_external_accounts_go_negative_guarded_ones_never(runtime: Runtime) -> None:
    account = fresh_account()
    await credit(runtime.sessionmaker, account, 700)
    async with runtime.sessionmaker() as session:
        assert await balance(session, clearing(account)) == -700
        assert await balance(session, accounts.topup_source(False, "XOF")) == 0


async def test_credits_are_appended_unfolded_and_create_no_account_row(runtime: Runtime) -> None:
    account = fresh_account()
    for amount in (100, 250):
        await credit(runtime.sessionmaker, account, amount)
    assert await postings(runtime.sessionmaker, account) == [(100, False), (250, False)]
    assert await head(runtime.sessionmaker, account) is None
    async with runtime.sessionmaker() as session:
        assert await balance(session, account) == 350


async def test_a_debit_folds_every_credit_under_its_lock(runtime: Runtime) -> None:
    account = fresh_account()
    for amount in (100, 250):
        await credit(runtime.sessionmaker, account, amount)
    await debit(runtime.sessionmaker, account, 50)
    assert await postings(runtime.sessionmaker, account) == [(100, True), (250, True), (-50, True)]
    assert await head(runtime.sessionmaker, account) == 300


async def test_a_credit_committed_after_a_later_one_is_still_folded(runtime: Runtime) -> None:
    """The case a checkpoint id misses: credit A gets the smaller posting id but commits after
    credit B and after a debit that folded B."""
    account = fresh_account()
    async with runtime.sessionmaker() as slow, runtime.sessionmaker() as fast:
        await record(slow, credit_entries(account, 1_000))  # appended first, not committed
        await record(fast, credit_entries(account, 200))
        await fast.commit()
        # The debit neither waits for the uncommitted credit nor counts it.
        await asyncio.wait_for(debit(runtime.sessionmaker, account, 200), timeout=5)
        with pytest.raises(Overdraft):
            await debit(runtime.sessionmaker, account, 1)
        await slow.commit()
    assert await postings(runtime.sessionmaker, account) == [
        (1_000, False),
        (200, True),
        (-200, True),
    ]
    async with runtime.sessionmaker() as session:
        assert await balance(session, account) == 1_000
    await debit(runtime.sessionmaker, account, 1_000)
    assert await head(runtime.sessionmaker, account) == 0
    assert all(folded for _, folded in await postings(runtime.sessionmaker, account))


async def test_a_credit_takes_no_row_lock_a_debit_waits_for_one(runtime: Runtime) -> None:
    account = fresh_account()
    await credit(runtime.sessionmaker, account, 500)
    await debit(runtime.sessionmaker, account, 100)  # the account row now exists
    async with runtime.sessionmaker() as holder:
        await holder.execute(
            text("SELECT 1 FROM ledger_accounts WHERE code = :c FOR UPDATE"), {"c": account.code}
        )
        # Credits to the locked account, and to the platform's fee account, go straight through.
        await asyncio.wait_for(credit(runtime.sessionmaker, account, 300), timeout=5)
        fees = accounts.platform("fees", False, "XOF")
        await asyncio.wait_for(credit(runtime.sessionmaker, fees, 10), timeout=5)
        blocked = asyncio.create_task(debit(runtime.sessionmaker, account, 700))
        done, _ = await asyncio.wait({blocked}, timeout=0.5)
        assert not done, "a debit must wait for the account's row lock"
        await holder.rollback()
    await asyncio.wait_for(blocked, timeout=5)
    async with runtime.sessionmaker() as session:
        assert await balance(session, account) == 0
