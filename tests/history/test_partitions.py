"""The history tables by month (issue 29, migration 0041): each is partitioned by month, its
months created ahead (`cauri migrate`, the worker's daily run), a row written in its month's
partition, and every unique key and guarantee of the tables as it was."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, time, timedelta

import httpx
import pytest
from sqlalchemy import exc, text

from cauri.history import partitions
from cauri.history.partitions import PARTITIONED
from cauri.history.tasks import keep_scheduled
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.months import Month
from cauri.kit.partitions import monthly
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.support import make_merchant, scalar
from tests.webhooks.builders import pay, set_endpoint
from tests.webhooks.receiver import Receiver


async def _partitions(runtime: Runtime, table: str) -> set[str]:
    async with runtime.sessionmaker() as session:
        found = await session.scalars(
            text(
                "SELECT CAST(inhrelid AS regclass)::text FROM pg_inherits "
                "WHERE inhparent = CAST(:table AS regclass)"
            ),
            {"table": table},
        )
        return set(found)


async def _where(runtime: Runtime, table: str, condition: str = "true") -> set[str]:
    """The partitions that hold `table`'s rows matching `condition`."""
    sql = f"SELECT DISTINCT tableoid::regclass::text FROM {table} WHERE {condition}"  # noqa: S608
    async with runtime.sessionmaker() as session:
        return set((await session.scalars(text(sql))).all())


async def _ensure(runtime: Runtime, now: datetime) -> partitions.Ahead:
    async with unit_of_work(runtime.sessionmaker) as session:
        return await partitions.ensure_ahead(session, now)


def test_months_follow_each_other_across_years() -> None:
    assert Month(2026, 11).plus(3) == Month(2027, 2)
    assert Month(2027, 1).plus(-1) == Month(2026, 12)
    assert Month.parse("2027-01").start == datetime(2027, 1, 1, tzinfo=UTC)
    assert Month.of(datetime(2026, 12, 31, 23, 30, tzinfo=UTC)) == Month(2026, 12)
    assert monthly("events", Month(2026, 12)) == "events_2026_12"
    assert str(Month(2027, 3)) == "2027-03"


async def test_each_history_table_has_this_month_and_the_next_ones(runtime: Runtime) -> None:
    """What `cauri migrate` leaves (the test database is made the same way)."""
    now = datetime.now(UTC)
    for table in PARTITIONED:
        found = await _partitions(runtime, table)
        assert {f"{table}_legacy", f"{table}_default"} <= found, found
        for n in range(partitions.MONTHS_AHEAD + 1):
            assert monthly(table, Month.of(now).plus(n)) in found, (table, found)


async def test_a_payment_and_its_webhook_are_written_in_their_months_partitions(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    clock = runtime.clock
    assert isinstance(clock, ManualClock)
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    month = Month.of(clock.now())
    paid = await pay(client, merchant)
    await worker.drain()
    assert await scalar(runtime, "SELECT status FROM webhook_deliveries") == "success"
    for table in ("events", "webhook_deliveries", "webhook_attempts", "ledger_postings"):
        assert await _where(runtime, table) == {monthly(table, month)}, table
    # Read back whole through the partitioned tables: the API's payment and its event.
    response = await client.get(f"/api/v1/payments/{paid['reference']}", headers=merchant.headers())
    assert response.status_code == 200
    events = await client.get("/api/v1/events", headers=merchant.headers())
    assert [event["event"] for event in events.json()["data"]] == ["payment.succeeded"]


async def test_a_row_of_a_month_without_partition_is_kept_and_its_month_left_for_a_person(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Past the months ahead (the daily run stopped for months): the write succeeds, in the
    default partition, and that month is not created over it but reported."""
    clock = runtime.clock
    assert isinstance(clock, ManualClock)
    clock.advance(timedelta(days=400).total_seconds())
    late = Month.of(clock.now())
    merchant = await make_merchant(runtime)
    await pay(client, merchant)
    assert await _where(runtime, "ledger_postings") == {"ledger_postings_default"}
    ahead = await _ensure(runtime, clock.now())
    assert ("ledger_postings", late) in ahead.held_in_default
    assert ("events", late) in ahead.held_in_default
    assert monthly("ledger_postings", late) not in await _partitions(runtime, "ledger_postings")
    # The months after it, which hold nothing yet, are created.
    assert monthly("ledger_postings", late.plus(1)) in ahead.created


async def test_months_are_created_once_when_processes_start_together(runtime: Runtime) -> None:
    later = datetime.now(UTC) + timedelta(days=800)
    done = await asyncio.gather(*(_ensure(runtime, later) for _ in range(4)))
    created = [name for ahead in done for name in ahead.created]
    assert len(created) == len(set(created)) == len(PARTITIONED) * (partitions.MONTHS_AHEAD + 1)
    assert (await _ensure(runtime, later)).created == []


async def test_the_worker_keeps_the_months_ahead(runtime: Runtime, worker: Worker) -> None:
    """Its daily run, queued when it starts, creates the months that came within reach."""
    clock = runtime.clock
    assert isinstance(clock, ManualClock)
    # Noon, 200 days on: the day's run (due at RUN_AT, 01:00) is due.
    noon = datetime.combine(clock.now().date() + timedelta(days=200), time(12), tzinfo=UTC)
    clock.advance((noon - clock.now()).total_seconds())
    wanted = monthly("events", Month.of(clock.now()).plus(partitions.MONTHS_AHEAD))
    assert wanted not in await _partitions(runtime, "events")
    await keep_scheduled(runtime)
    await worker.drain()
    assert wanted in await _partitions(runtime, "events")
    queued = await scalar(
        runtime, "SELECT payload ->> 'day' FROM jobs WHERE kind = 'history.months_ahead'"
    )
    assert queued == (clock.now().date() + timedelta(days=1)).isoformat()


async def test_a_delivery_is_its_events_alone_and_an_attempt_number_is_recorded_once(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    """The keys hold the partition key; the foreign keys make it the event's: a second
    delivery of the event, or one at another instant, is refused as before (by the unique
    key, by the foreign key); so is an attempt's number recorded twice."""
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    await pay(client, merchant)
    await worker.drain()
    insert = (
        "INSERT INTO webhook_deliveries (id, event_id, merchant_id, livemode, event, url, "
        "status, attempts, series_attempts, created_at) SELECT :id, e.id, e.merchant_id, false, "
        "e.type, 'https://x.example', 'pending', 0, 0, e.created_at + :shift FROM events e"
    )
    for shift in (timedelta(0), timedelta(seconds=1)):
        with pytest.raises(exc.IntegrityError):
            async with unit_of_work(runtime.sessionmaker) as session:
                await session.execute(text(insert), {"id": uuid.uuid4(), "shift": shift})
    with pytest.raises(exc.IntegrityError):
        async with unit_of_work(runtime.sessionmaker) as session:
            await session.execute(
                text(
                    "INSERT INTO webhook_attempts (delivery_id, delivery_created_at, number, "
                    "started_at, duration_ms) SELECT delivery_id, delivery_created_at, number, "
                    "started_at, 1 FROM webhook_attempts"
                )
            )


async def test_a_posting_is_at_its_transactions_instant_and_never_moves(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """The zero-sum check reads a transaction's postings in its month's partition: a posting
    at another instant than its transaction's is refused (the foreign key), and a posting's
    instant never changes (the append-only trigger)."""
    merchant = await make_merchant(runtime)
    await pay(client, merchant)
    with pytest.raises(exc.IntegrityError):
        async with unit_of_work(runtime.sessionmaker) as session:
            await session.execute(
                text(
                    "INSERT INTO ledger_postings (transaction_id, created_at, account, currency, "
                    "amount) SELECT id, created_at + interval '40 days', 'platform:x:test:XOF', "
                    "'XOF', 0 FROM ledger_transactions"
                )
            )
    with pytest.raises(exc.DBAPIError, match="append-only"):
        async with unit_of_work(runtime.sessionmaker) as session:
            await session.execute(
                text("UPDATE ledger_postings SET created_at = created_at - interval '1 day'")
            )
