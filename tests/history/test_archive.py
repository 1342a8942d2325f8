"""The ledger's period close and `cauri archive` (issue 29): a month of history leaves the
database, dumped, read back and checked, and every balance, the ledger's check and the
writes of the open months hold as before. On a database of its own: a close and an archive
change which months the database takes, for good."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import exc, text

from cauri.app import create_app
from cauri.audit.actor import Actor
from cauri.balance.transactions import statement
from cauri.config import Settings
from cauri.history import archive, partitions
from cauri.jobs import handlers
from cauri.kit.clock import ManualClock
from cauri.kit.db import make_engine, make_sessionmaker, unit_of_work
from cauri.kit.embedded_pg import PROGRAMS
from cauri.kit.errors import Conflict, InvalidRequest
from cauri.kit.months import Month
from cauri.kit.partitions import monthly
from cauri.ledger import holdings, reconciliation
from cauri.runtime import Runtime, operator_registry
from cauri.staff import actions
from cauri.worker.runner import Worker
from tests.conftest import TEST_SECRET_KEY
from tests.databases import fresh_database
from tests.payouts.builders import payout_body, top_up
from tests.support import MerchantKeys, make_merchant, momo_body, scalar
from tests.webhooks.builders import set_endpoint
from tests.webhooks.receiver import Receiver

RETENTION = 12


@pytest.fixture
async def own(tmp_path: Path) -> AsyncIterator[Runtime]:
    """A runtime on a database of its own, its clock at this month's middle (real time)."""
    async with fresh_database("cauri_archive") as url:
        settings = Settings(
            database_url=url,
            secret_key=TEST_SECRET_KEY,
            rate_limit="100000/minute",
            webhook_allow_private=True,
            history_retention_months=RETENTION,
        )
        engine = make_engine(url, pool_size=5)
        clock = ManualClock()
        clock.advance(
            (Month.of(clock.now()).start + timedelta(days=14) - clock.now()).total_seconds()
        )
        runtime = Runtime(
            settings, clock, engine, make_sessionmaker(engine), operator_registry(settings)
        )
        try:
            yield runtime
        finally:
            await runtime.close()


async def _history(runtime: Runtime, receiver: Receiver) -> str:
    """This month's: payments with their webhooks, a top-up and a payout (a folded debit),
    an operator exchange. The merchant's id."""
    transport = httpx.ASGITransport(app=create_app(runtime), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        merchant = await make_merchant(runtime)
        await set_endpoint(client, merchant, receiver.url)
        for amount in (1000, 2500, 4000):
            paid = await client.post(
                "/api/v1/payments", json=momo_body(amount=amount), headers=merchant.headers()
            )
            assert paid.status_code == 201, paid.text
        await top_up(runtime, merchant.id, 10_000)
        payout = await client.post(
            "/api/v1/payouts", json=payout_body(amount=3000), headers=merchant.headers()
        )
        assert payout.status_code == 201, payout.text
    await Worker(runtime, handlers()).drain()
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text(
                "INSERT INTO operator_exchanges (connector, action, method, url, duration_ms, "
                "created_at) VALUES ('mtn', 'collect', 'POST', 'https://op.example', 5, :at)"
            ),
            {"at": runtime.clock.now()},
        )
    return merchant.id


async def _balances(runtime: Runtime, merchant_id: str) -> tuple[object, ...]:
    async with runtime.sessionmaker() as session:
        return (
            await holdings.available(session, merchant_id, False, ["XOF"]),
            [(b.code, b.balance) for b in await reconciliation.account_balances(session)],
            await holdings.receivables(session),
        )


async def _check_passes(runtime: Runtime) -> None:
    async with runtime.sessionmaker() as session:
        findings = await reconciliation.check(session)
    assert findings.passed, (findings.counts, findings.first)


_BACK_DATED = text(
    "WITH t AS (INSERT INTO ledger_transactions (kind, reference, livemode, created_at) "
    "VALUES ('test', 'late', false, :at) RETURNING id, created_at) "
    "INSERT INTO ledger_postings (transaction_id, created_at, account, currency, amount) "
    "SELECT id, created_at, a, 'XOF', n FROM t, (VALUES "
    "('platform:bank:test:XOF', -5), ('platform:fees:test:XOF', 5)) AS p(a, n)"
)


async def _refused_back_dated(runtime: Runtime, at: datetime) -> None:
    with pytest.raises(exc.DBAPIError, match="closed"):
        async with unit_of_work(runtime.sessionmaker) as session:
            await session.execute(_BACK_DATED, {"at": at})


def _later(runtime: Runtime, months: int) -> None:
    clock = runtime.clock
    assert isinstance(clock, ManualClock)
    clock.advance(timedelta(days=31 * months).total_seconds())


async def test_a_closed_and_archived_month_leaves_every_balance_as_it_was(
    own: Runtime, tmp_path: Path
) -> None:
    this = Month.of(own.clock.now())
    with Receiver() as receiver:
        merchant_id = await _history(own, receiver)
    before = await _balances(own, merchant_id)
    _later(own, RETENTION + 1)
    async with unit_of_work(own.sessionmaker) as session:
        await partitions.ensure_ahead(session, own.clock.now())

    # Not closed yet: nothing leaves.
    with pytest.raises(Conflict):
        await actions.archive_history(own, Actor.cli(), this.plus(1), tmp_path)
    closed = await actions.close_ledger(own, Actor.cli(), this)
    # The legacy partition (everything before migration 0041) closes as the month before.
    assert closed.months == [this.plus(-1), this]
    assert (await actions.close_ledger(own, Actor.cli(), this)).months == []
    assert await _balances(own, merchant_id) == before
    await _check_passes(own)
    # A closed month takes no back-dated posting.
    await _refused_back_dated(own, this.start + timedelta(days=3))

    done = await actions.archive_history(own, Actor.cli(), this.plus(1), tmp_path)
    left = {a.partition for a in done}
    for table in archive.ORDER:
        assert {f"{table}_legacy", monthly(table, this)} <= left, table
    rows = {a.partition: a.rows for a in done}
    assert rows[monthly("events", this)] >= 4  # 3 payments, the payout
    assert rows[monthly("webhook_attempts", this)] == rows[monthly("events", this)]
    assert rows[monthly("operator_exchanges", this)] == 1
    assert all(a.file.exists() for a in done)
    async with own.sessionmaker() as session:
        gone = await session.scalar(
            text("SELECT to_regclass(:name) IS NULL"),
            {"name": monthly("ledger_postings", this)},
        )
        assert gone
        assert await session.scalar(text("SELECT count(*) FROM ledger_postings")) == 0
    # Balances, receivables and the check: as before, from what was carried forward; the
    # statement of a month now opens with it, and an archived month's is no longer kept.
    assert await _balances(own, merchant_id) == before
    await _check_passes(own)
    async with own.sessionmaker() as session:
        now = await statement(session, merchant_id, False, "XOF", Month.of(own.clock.now()))
        assert {"XOF": now.opening} == before[0]
        with pytest.raises(InvalidRequest):
            await statement(session, merchant_id, False, "XOF", this)
    assert await actions.archive_history(own, Actor.cli(), this.plus(1), tmp_path) == []
    # Its partition gone, a posting dated in it would go to the default one: refused there.
    await _refused_back_dated(own, this.start + timedelta(days=3))
    entries = await scalar(own, "SELECT count(*) FROM audit_log WHERE action = 'history.archive'")
    assert entries == len(done)

    # The open months go on: a payment now, its money on top of what was carried.
    transport = httpx.ASGITransport(app=create_app(own), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        merchant = await make_merchant(own, name="Nouvelle")
        paid = await client.post("/api/v1/payments", json=momo_body(), headers=merchant.headers())
        assert paid.status_code == 201
    await _check_passes(own)


async def test_a_month_leaves_only_past_retention_and_closes_only_once_over(
    own: Runtime, tmp_path: Path
) -> None:
    this = Month.of(own.clock.now())
    with pytest.raises(InvalidRequest):
        await actions.archive_history(own, Actor.cli(), this, tmp_path)
    with pytest.raises(Conflict):
        await actions.close_ledger(own, Actor.cli(), this)
    _later(own, 1)
    with pytest.raises(InvalidRequest):  # inside the legacy partition: it closes whole
        await actions.close_ledger(own, Actor.cli(), this.plus(-3))


async def test_a_dump_that_does_not_read_back_whole_drops_nothing(
    own: Runtime, tmp_path: Path
) -> None:
    """pg_restore that loses a row (a truncated file, a bad disk): the check refuses, the
    partition stays (the empty legacy partition before it read back whole, and left)."""
    this = Month.of(own.clock.now())
    with Receiver() as receiver:
        await _history(own, receiver)
    _later(own, RETENTION + 1)
    await actions.close_ledger(own, Actor.cli(), this)
    programs = tmp_path / "programs"
    programs.mkdir()
    (programs / "pg_dump").symlink_to(PROGRAMS / "pg_dump")
    lossy = programs / "pg_restore"
    # The row numbered 1 of each table goes missing from what it reads back.
    lossy.write_text(f'#!/bin/sh\n"{PROGRAMS / "pg_restore"}" "$@" | awk -F "\\t" \'$1 != "1"\'\n')
    lossy.chmod(0o755)
    own.settings.pg_programs = programs
    with pytest.raises(archive.ArchiveFailed):
        await actions.archive_history(own, Actor.cli(), this.plus(1), tmp_path / "out")
    async with own.sessionmaker() as session:
        kept = await session.scalar(
            text("SELECT to_regclass(:name) IS NOT NULL"),
            {"name": monthly("webhook_attempts", this)},
        )
        attempts = await session.scalar(text("SELECT count(*) FROM webhook_attempts"))
    assert kept and attempts
    assert (tmp_path / "out" / f"{monthly('webhook_attempts', this)}.dump").exists()


async def test_a_close_while_money_moves_keeps_every_balance_and_overdraws_nothing(
    own: Runtime,
) -> None:
    """The close folds each account under its head's lock while payouts debit the same
    balances and payments credit them, all at once: nothing is overdrawn, nothing counted
    twice, and the ledger reconciles."""
    this = Month.of(own.clock.now())
    merchants = []
    for n in range(4):
        merchant = await make_merchant(own, name=f"Boutique {n}")
        await top_up(own, merchant.id, 5_000)
        merchants.append(merchant)
    # The next month, eight days in: this month closes while the new one takes the money.
    next_start = this.end + timedelta(days=8)
    clock = own.clock
    assert isinstance(clock, ManualClock)
    clock.advance((next_start - clock.now()).total_seconds())
    transport = httpx.ASGITransport(app=create_app(own), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:

        async def payout(merchant: MerchantKeys) -> int:
            answer = await client.post(
                "/api/v1/payouts", json=payout_body(amount=1_000), headers=merchant.headers()
            )
            return answer.status_code

        async def payment(merchant: MerchantKeys) -> int:
            answer = await client.post(
                "/api/v1/payments", json=momo_body(amount=500), headers=merchant.headers()
            )
            return answer.status_code

        moves = [payout(m) for m in merchants for _ in range(6)]
        moves += [payment(m) for m in merchants for _ in range(3)]
        closing = actions.close_ledger(own, Actor.cli(), this)
        *answers, closed = await asyncio.gather(*moves, closing)
    assert closed.months == [this.plus(-1), this]
    paid_out = answers[: len(merchants) * 6]
    assert set(paid_out) <= {201, 402} and set(answers[len(paid_out) :]) == {201}
    await _check_passes(own)
    async with own.sessionmaker() as session:
        for merchant in merchants:
            held = await holdings.available(session, merchant.id, False, ["XOF"])
            assert held["XOF"] >= 0
    # 5,000 topped up and 1,500 paid in: at most 6 payouts of 1,000 (and their fees) each.
    assert paid_out.count(201) <= len(merchants) * 6
