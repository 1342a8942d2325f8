"""Issue 14, the ledger's balances and reconciliation check (cauri.staff.reconciliation,
cauri.ledger.reconciliation, `cauri ledger balances|check`): a healthy ledger passes, a
posting or an account head changed behind the ledger's back fails, naming what is wrong;
each run is recorded with its date."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.ledger import accounts
from cauri.models import Reconciliation
from cauri.runtime import Runtime
from cauri.staff import reconciliation
from tests.foundation.builders import run_cli
from tests.staff.traffic import API, traffic
from tests.support import scalar


async def _check(runtime: Runtime) -> Reconciliation:
    async with unit_of_work(runtime.sessionmaker) as session:
        return await reconciliation.check(session, runtime.clock.now())


async def _tamper(runtime: Runtime, sql: str, **params: Any) -> None:
    """Behind the ledger's back: the database refuses to change a posting (migration 0022)
    unless a superuser skips its triggers, which is what the check is there to find."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(text("SET LOCAL session_replication_role = replica"))
        await session.execute(text(sql), params)


async def test_a_healthy_ledger_passes_and_is_recorded(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    await traffic(client, runtime, clock)
    checked = await _check(runtime)
    assert checked.passed
    assert checked.counts == {"unbalanced": 0, "stale_head": 0, "negative": 0}
    assert checked.discrepancies == []
    assert checked.transactions == await scalar(runtime, "SELECT count(*) FROM ledger_transactions")
    assert checked.postings == await scalar(runtime, "SELECT count(*) FROM ledger_postings")
    assert checked.accounts == await scalar(runtime, "SELECT count(*) FROM ledger_accounts")
    assert checked.checked_at == clock.now()
    async with runtime.sessionmaker() as session:
        last = await reconciliation.latest(session)
    assert last is not None and last.id == checked.id and last.passed


async def test_a_tampered_ledger_fails_naming_what_is_wrong(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, database_url: str
) -> None:
    seen = await traffic(client, runtime, clock)
    transaction = await scalar(
        runtime,
        "SELECT id FROM ledger_transactions WHERE reference = :r",
        r=seen.others["reference"],
    )
    balance = accounts.merchant_available(seen.other.id, False, "XOF").code
    head = accounts.merchant_available(seen.shop.id, False, "XOF").code
    stored = await scalar(runtime, "SELECT balance FROM ledger_accounts WHERE code = :c", c=head)
    # The other merchant's credit turned into a debit, and the shop's head changed, directly.
    flip = "UPDATE ledger_postings SET amount = -amount WHERE transaction_id = :t AND account = :a"
    await _tamper(runtime, flip, t=transaction, a=balance)
    shift = "UPDATE ledger_accounts SET balance = balance + :by WHERE code = :c"
    await _tamper(runtime, shift, by=-7, c=head)
    try:
        checked = await _check(runtime)
        assert not checked.passed
        assert checked.counts == {"unbalanced": 1, "stale_head": 1, "negative": 1}
        assert checked.discrepancies == [
            {
                "check": "unbalanced",
                "subject": str(transaction),
                "currency": "XOF",
                "found": -2000,
                "expected": 0,
            },
            {
                "check": "stale_head",
                "subject": head,
                "currency": "XOF",
                "found": stored - 7,
                "expected": stored,
            },
            {
                "check": "negative",
                "subject": balance,
                "currency": "XOF",
                "found": -1000,
                "expected": 0,
            },
        ]

        failed = await run_cli(database_url, "ledger", "check")
        assert failed.exit_code == 1, failed.stderr
        assert "reconciliation FAILED" in failed.stdout
        assert "unbalanced: 1, stale_head: 1, negative: 1" in failed.stdout
        assert str(transaction) in failed.stdout and head in failed.stdout
        assert balance in failed.stdout
    finally:
        await _tamper(runtime, flip, t=transaction, a=balance)
        await _tamper(runtime, shift, by=7, c=head)

    passed = await run_cli(database_url, "ledger", "check", "--json")
    shown = passed.json()
    assert shown["passed"] is True and shown["discrepancies"] == []
    recorded = await scalar(runtime, "SELECT array_agg(passed ORDER BY id) FROM reconciliations")
    assert recorded == [False, False, True]


async def test_balances_per_account(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, database_url: str
) -> None:
    seen = await traffic(client, runtime, clock)
    async with runtime.sessionmaker() as session:
        rows = await reconciliation.balances(session)
    by_kind = {(row.kind, row.owner, row.livemode, row.currency): row for row in rows}
    api = await client.get(f"{API}/balance", headers=seen.shop.headers())
    [shown] = api.json()["data"]
    assert by_kind[("available", seen.shop.id, False, "XOF")].balance == shown["available"]
    escrow = by_kind[("escrow", seen.shop.id, False, "XOF")]
    assert (escrow.balance, escrow.accounts) == (shown["escrowed"], 1)
    assert escrow.code == f"merchant:{seen.shop.id}:escrow:test:XOF"
    assert by_kind[("available", seen.shop.id, True, "XOF")].balance == 1000
    assert by_kind[("available", seen.other.id, False, "XOF")].balance == 1000
    assert by_kind[("topups", "platform", False, "XOF")].balance == -10_000
    assert ("clearing", "mtn", False, "XOF") in by_kind
    # Every transaction balances: so does every environment's and currency's whole.
    totals: dict[tuple[bool, str], int] = {}
    for row in rows:
        totals[(row.livemode, row.currency)] = totals.get((row.livemode, row.currency), 0) + (
            row.balance
        )
    assert set(totals.values()) == {0}

    result = await run_cli(database_url, "ledger", "balances", "--json")
    listed = result.rows()
    assert len(listed) == len(rows)
    assert {
        "code": f"merchant:{seen.shop.id}:available:test:XOF",
        "kind": "available",
        "owner": seen.shop.id,
        "mode": "test",
        "currency": "XOF",
        "balance": shown["available"],
        "accounts": 1,
    } in listed
