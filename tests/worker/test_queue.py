"""The job queue (DESIGN invariant 5): outbox semantics, exclusive claims, retries with
backoff, leases. Workers are built on test-only kinds: Worker(runtime, {KIND: handler})."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker import queue
from cauri.worker.lanes import MONEY_LIVE
from cauri.worker.runner import Worker
from tests.support import scalar
from tests.worker.builders import INSERT_RUN, KIND, enqueue, job, job_count, runs

LEASE = 60.0  # the default CAURI_JOB_LEASE_SECONDS the runtime fixture uses


async def test_a_job_enqueued_in_a_rolled_back_transaction_never_runs(runtime: Runtime) -> None:
    ran: list[dict[str, Any]] = []

    async def handler(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
        ran.append(payload)

    async with runtime.sessionmaker() as session:
        await queue.enqueue(session, KIND, {"n": 1}, livemode=True, now=runtime.clock.now())
        await session.rollback()
    assert await Worker(runtime, {KIND: handler}).drain() == 0
    assert ran == []
    assert await job_count(runtime) == 0


async def test_two_workers_never_run_the_same_job(runtime: Runtime) -> None:
    count = 200
    ran: dict[str, list[int]] = {"first": [], "second": []}

    def recording(name: str) -> Any:
        async def handler(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
            ran[name].append(payload["n"])
            await asyncio.sleep(0.001)  # let the other worker claim meanwhile

        return handler

    async with runtime.sessionmaker() as session, session.begin():
        for n in range(count):
            await queue.enqueue(session, KIND, {"n": n}, livemode=True, now=runtime.clock.now())
    workers = [Worker(runtime, {KIND: recording(name)}, concurrency=5) for name in ran]

    drained = await asyncio.gather(*(worker.drain() for worker in workers))

    assert sum(drained) == count
    assert sorted(ran["first"] + ran["second"]) == list(range(count))  # each exactly once
    assert ran["first"] and ran["second"], "both workers took part"
    assert await job_count(runtime) == 0


async def test_a_failing_job_is_retried_with_backoff_then_failed(
    runtime: Runtime, clock: ManualClock
) -> None:
    calls = 0

    async def handler(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError(f"panne n°{calls}")

    worker = Worker(runtime, {KIND: handler})
    job_id = await enqueue(runtime, {}, max_attempts=3)

    for attempt in (1, 2):
        assert await worker.drain() == 1
        row = await job(runtime, job_id)
        assert row is not None
        assert (row["status"], row["attempts"]) == ("queued", attempt)
        assert row["run_at"] == clock.now() + timedelta(seconds=queue.backoff(attempt))
        assert f"panne n°{attempt}" in row["last_error"]
        clock.advance(queue.backoff(attempt) - 0.5)
        assert await worker.drain() == 0, "not before its backoff"
        clock.advance(0.5)

    assert await worker.drain() == 1
    row = await job(runtime, job_id)
    assert row is not None and (row["status"], row["attempts"]) == ("failed", 3)
    clock.advance(3600)
    assert await worker.drain() == 0
    assert calls == 3


async def test_a_retried_job_keeps_only_the_writes_of_its_successful_run(
    runtime: Runtime, clock: ManualClock, runs_table: None
) -> None:
    async def handler(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
        await session.execute(INSERT_RUN, {"key": payload["key"], "run": "attempt"})
        if payload["key"] not in failed_once:
            failed_once.add(payload["key"])
            raise RuntimeError("première tentative")

    failed_once: set[str] = set()
    key = uuid.uuid4().hex
    await enqueue(runtime, {"key": key})
    worker = Worker(runtime, {KIND: handler})
    await worker.drain()
    assert await runs(runtime, key) == []
    clock.advance(queue.backoff(1))
    assert await worker.drain() == 1
    assert await runs(runtime, key) == ["attempt"]
    assert await job_count(runtime) == 0


async def test_a_job_whose_worker_died_is_claimed_again_after_its_lease(
    runtime: Runtime, clock: ManualClock
) -> None:
    ran: list[int] = []

    async def handler(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
        ran.append(payload["n"])

    job_id = await enqueue(runtime, {"n": 1})
    async with runtime.sessionmaker() as session, session.begin():  # a worker that then died
        [claimed] = await queue.claim(
            session, lane=MONEY_LIVE, now=clock.now(), limit=10, lease=LEASE
        )
    worker = Worker(runtime, {KIND: handler})
    clock.advance(LEASE - 1)
    assert await worker.drain() == 0, "the lease still holds"
    clock.advance(1)
    assert await worker.drain() == 1
    assert ran == [1]
    assert claimed.id == job_id and await job(runtime, job_id) is None


async def test_a_lease_that_runs_out_on_the_last_attempt_fails_the_job(
    runtime: Runtime, clock: ManualClock
) -> None:
    job_id = await enqueue(runtime, {}, max_attempts=1)
    async with runtime.sessionmaker() as session, session.begin():
        await queue.claim(session, lane=MONEY_LIVE, now=clock.now(), limit=1, lease=LEASE)
    clock.advance(LEASE)

    async def handler(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
        raise AssertionError("a job out of attempts must not run")

    assert await Worker(runtime, {KIND: handler}).drain() == 0
    row = await job(runtime, job_id)
    assert row is not None
    assert (row["status"], row["attempts"], row["locked_until"]) == ("failed", 1, None)
    assert "lease expired" in row["last_error"]


async def test_a_claim_takes_at_most_its_limit_of_due_and_expired_jobs(
    runtime: Runtime, clock: ManualClock
) -> None:
    for n in range(10):
        await enqueue(runtime, {"n": n})
    async with runtime.sessionmaker() as session, session.begin():
        assert (
            len(await queue.claim(session, lane=MONEY_LIVE, now=clock.now(), limit=10, lease=LEASE))
            == 10
        )
    clock.advance(LEASE)
    for n in range(10):
        await enqueue(runtime, {"n": n})
    async with runtime.sessionmaker() as session, session.begin():
        claimed = await queue.claim(session, lane=MONEY_LIVE, now=clock.now(), limit=5, lease=LEASE)
    assert len(claimed) == 5
    leased = "SELECT count(*) FROM jobs WHERE status = 'running' AND locked_until > :now"
    assert await scalar(runtime, leased, now=clock.now()) == 5


async def test_a_worker_that_lost_its_lease_keeps_none_of_its_writes(
    runtime: Runtime, clock: ManualClock, runs_table: None
) -> None:
    """Worker A outlives its lease; worker B reclaims the job and completes it; when A finishes,
    its handler's writes are rolled back and the job is neither retried nor run again."""
    started, release = asyncio.Event(), asyncio.Event()
    calls = 0

    async def handler(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
        nonlocal calls
        calls += 1
        run = f"run {calls}"
        await session.execute(INSERT_RUN, {"key": payload["key"], "run": run})
        if calls == 1:
            started.set()
            await release.wait()

    key = uuid.uuid4().hex
    job_id = await enqueue(runtime, {"key": key})
    first, second = Worker(runtime, {KIND: handler}), Worker(runtime, {KIND: handler})
    slow = asyncio.create_task(first.run_due())
    await asyncio.wait_for(started.wait(), timeout=5)
    clock.advance(LEASE + 1)
    assert await second.run_due() == 1
    release.set()
    assert await slow == 1

    assert await runs(runtime, key) == ["run 2"]
    assert await job(runtime, job_id) is None
    assert await Worker(runtime, {KIND: handler}).drain() == 0
    assert calls == 2


async def test_a_job_of_an_unknown_kind_is_retried_not_lost(runtime: Runtime) -> None:
    job_id = await enqueue(runtime, {}, kind="test.unknown")
    assert await Worker(runtime, {}).drain() == 1
    row = await job(runtime, job_id)
    assert row is not None and row["status"] == "queued" and "test.unknown" in row["last_error"]
