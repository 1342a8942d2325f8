"""The history's daily run, the worker's own: the months ahead of every partitioned table
created (cauri.history.partitions), then the next day's run queued, due at RUN_AT. One chain
of days, started by the worker when none is queued or running."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.history import jobs, partitions
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.worker.jobs import DayJob, Job

log = structlog.get_logger("cauri.history")

RUN_AT = time(1, 0)  # UTC


async def create_months_ahead(session: AsyncSession, runtime: Runtime, job: DayJob) -> None:
    now = runtime.clock.now()
    ahead = await partitions.ensure_ahead(session, now)
    for name in ahead.created:
        log.info("history.partition_created", partition=name)
    for table, month in ahead.held_in_default:
        # Rows of a month written before its partition: a person moves them (SCALING.md).
        log.error("history.month_in_default_partition", table=table, month=str(month))
    await _queue(session, date.fromisoformat(job.day) + timedelta(days=1), now)


async def keep_scheduled(runtime: Runtime) -> None:
    """When the worker starts: today's run, due now, unless one is queued or running."""
    now = runtime.clock.now()
    async with unit_of_work(runtime.sessionmaker) as session:
        if not await jobs.MONTHS_AHEAD.pending(session):
            await _queue(session, now.astimezone(UTC).date(), now)


async def _queue(session: AsyncSession, day: date, now: datetime) -> None:
    due = datetime.combine(day, RUN_AT, tzinfo=UTC)
    await jobs.MONTHS_AHEAD.enqueue_once(
        session,
        DayJob(day.isoformat()),
        livemode=True,
        now=now,
        delay=max((due - now).total_seconds(), 0.0),
    )


JOBS = (Job(jobs.MONTHS_AHEAD, create_months_ahead),)
