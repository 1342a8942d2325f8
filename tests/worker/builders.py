"""Builders for the job queue tests: committed enqueues, job rows, and a table in which test
handlers record their writes (so a rolled-back run leaves no row)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import text

from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.webhooks.jobs import DELIVER
from cauri.worker import queue
from cauri.worker.lanes import Family
from tests.support import scalar

KIND = "test.kind"

CREATE_RUNS = "CREATE TABLE IF NOT EXISTS test_job_runs (job_key text NOT NULL, run text NOT NULL)"
DROP_RUNS = "DROP TABLE IF EXISTS test_job_runs"
INSERT_RUN = text("INSERT INTO test_job_runs (job_key, run) VALUES (:key, :run)")


async def enqueue(runtime: Runtime, payload: dict[str, Any], **options: Any) -> int:
    """Enqueues one job of KIND (or options' kind) in its own committed transaction, live
    unless options say otherwise."""
    kind = options.pop("kind", KIND)
    livemode = options.pop("livemode", True)
    options.setdefault("family", Family.WEBHOOKS if kind == DELIVER.name else Family.MONEY)
    async with unit_of_work(runtime.sessionmaker) as session:
        return await queue.enqueue(
            session, kind, payload, livemode=livemode, now=runtime.clock.now(), **options
        )


async def job(runtime: Runtime, job_id: int) -> dict[str, Any] | None:
    async with runtime.sessionmaker() as session:
        row = (
            (await session.execute(text("SELECT * FROM jobs WHERE id = :id"), {"id": job_id}))
            .mappings()
            .first()
        )
    return dict(row) if row else None


async def job_count(runtime: Runtime) -> int:
    return int(await scalar(runtime, "SELECT count(*) FROM jobs"))


async def runs(runtime: Runtime, key: str) -> list[str]:
    """The committed writes of the runs of the job with this key."""
    async with runtime.sessionmaker() as session:
        found = await session.execute(
            text("SELECT run FROM test_job_runs WHERE job_key = :key"), {"key": key}
        )
        return list(found.scalars())


async def eventually(check: Callable[[], Awaitable[Any]], timeout: float = 5) -> Any:  # noqa: ASYNC109
    """The first truthy result of `check`, polled: what it watches (rows, another process's
    files) cannot set an Event."""
    async with asyncio.timeout(timeout):
        while not (found := await check()):  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    return found
