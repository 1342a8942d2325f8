"""The long-running worker: woken by LISTEN/NOTIFY, polling when no notification comes or
when its listening connection is gone."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import LISTENER_NAME, Worker
from tests.support import scalar, with_settings
from tests.worker.builders import KIND, enqueue, eventually, job_count

LISTENER_PID = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND application_name = :name"
)


@asynccontextmanager
async def running(runtime: Runtime, ran: asyncio.Queue[dict[str, Any]]) -> AsyncIterator[Worker]:
    async def handler(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
        ran.put_nowait(payload)

    worker, stop = Worker(runtime, {KIND: handler}), asyncio.Event()
    task = asyncio.create_task(worker.run_forever(stop))
    try:
        yield worker
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=10)


async def _listener(runtime: Runtime) -> int | None:
    return await scalar(runtime, LISTENER_PID, name=LISTENER_NAME)  # type: ignore[no-any-return]


async def test_a_notification_wakes_a_sleeping_worker_at_once(runtime: Runtime) -> None:
    sleepy = with_settings(runtime, worker_poll_interval=60)
    ran: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    async with running(sleepy, ran):
        await eventually(lambda: _listener(runtime))
        await asyncio.sleep(0.3)  # past its first claim: asleep for a minute
        started = time.monotonic()
        await enqueue(runtime, {"n": 1})
        assert await asyncio.wait_for(ran.get(), timeout=5) == {"n": 1}
        assert time.monotonic() - started < 5
    assert await job_count(runtime) == 0


async def test_a_job_that_falls_due_without_notification_is_found_by_polling(
    runtime: Runtime, clock: ManualClock
) -> None:
    polling = with_settings(runtime, worker_poll_interval=0.2)
    ran: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    async with running(polling, ran):
        await enqueue(runtime, {"n": 1}, delay=30)  # notified, but not due yet
        await asyncio.sleep(0.5)
        assert ran.empty()
        clock.advance(30)  # due now; nothing is notified
        assert await asyncio.wait_for(ran.get(), timeout=5) == {"n": 1}


async def test_a_worker_whose_listener_is_cut_polls_then_listens_again(runtime: Runtime) -> None:
    polling = with_settings(runtime, worker_poll_interval=0.5)
    ran: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    async with running(polling, ran):
        first = await eventually(lambda: _listener(runtime))
        await scalar(runtime, "SELECT pg_terminate_backend(:pid)", pid=first)
        await enqueue(runtime, {"n": 1})  # its notification reaches no one
        assert await asyncio.wait_for(ran.get(), timeout=5) == {"n": 1}

        async def reconnected() -> bool:
            pid = await _listener(runtime)
            return pid is not None and pid != first

        await eventually(reconnected)
        await enqueue(runtime, {"n": 2})
        assert await asyncio.wait_for(ran.get(), timeout=5) == {"n": 2}


async def test_the_listener_connects_to_the_listen_url(runtime: Runtime) -> None:
    # Another database of the same server, told apart in pg_stat_activity; the jobs' own
    # notifications are not heard there, so they are found by polling.
    elsewhere = runtime.engine.url.set(database="postgres").render_as_string(hide_password=False)
    listening = with_settings(runtime, database_listen_url=elsewhere, worker_poll_interval=0.2)
    ran: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    async with running(listening, ran):
        await eventually(
            lambda: scalar(
                runtime,
                "SELECT pid FROM pg_stat_activity WHERE datname = 'postgres' "
                "AND application_name = :name",
                name=LISTENER_NAME,
            )
        )
        assert await _listener(runtime) is None
        await enqueue(runtime, {"n": 1})
        assert await asyncio.wait_for(ran.get(), timeout=5) == {"n": 1}
