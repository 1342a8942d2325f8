"""The daily reconciliation, the worker's own: each connector account's statement of the
day before fetched where its operator has an API (cauri.reconciliation.sources), every
connector account's day matched, then the next day's run queued, due at RUN_AT the day after
it (the platform's days: CAURI_TIME_ZONE), when the operators' statements of the day are
complete (pawaPay: up to an hour behind). One chain of days: queued once (its payload is the
day), and started by the worker when none is queued."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.kit.db import unit_of_work
from cauri.kit.errors import Conflict
from cauri.models import ConnectorAccount
from cauri.reconciliation import jobs, sources
from cauri.reconciliation.days import Days
from cauri.reconciliation.runs import reconcile_day
from cauri.runtime import Runtime
from cauri.worker.jobs import DayJob, Job

log = structlog.get_logger("cauri.reconciliation")

RUN_AT = time(3, 0)
ACTOR = Actor.worker("reconciliation")


def due(day: date, now: datetime, days: Days) -> float:
    """Seconds from `now` until `day`'s run falls due (RUN_AT the day after), 0 if past."""
    at = days.at(day + timedelta(days=1), RUN_AT)
    return max((at - now).total_seconds(), 0.0)


async def reconcile_daily(session: AsyncSession, runtime: Runtime, job: DayJob) -> None:
    """The day's statements fetched, then the day before matched again (its requests of the
    last minutes were booked on this day's statement) and the day itself. A connector that
    fails is logged and the others go on; the next day is queued whatever happened, so the
    chain never breaks. Nothing is held while an operator is asked: `session`, the job's
    own, is used last, to queue the next day."""
    day = date.fromisoformat(job.day)
    days = Days(runtime.settings.zone)
    async with runtime.sessionmaker() as reading:
        names = list((await reading.scalars(select(ConnectorAccount.name))).all())
    for name in names:
        try:
            await sources.fetch(runtime, ACTOR, name, day)
        except (Conflict, sources.NoStatementApi):
            pass  # fetched already, or an operator whose statements are files
        except Exception:
            log.exception("reconciliation.fetch_failed", connector=name, day=job.day)
    for name in names:
        for matched in (day - timedelta(days=1), day):
            try:
                async with unit_of_work(runtime.sessionmaker) as each:
                    now = runtime.clock.now()
                    run = await reconcile_day(each, ACTOR, name, matched, now, days)
            except Exception:
                log.exception("reconciliation.run_failed", connector=name, day=str(matched))
                continue
            log.info("reconciliation.day", connector=name, day=str(matched), found=run.found)
    await _queue(session, day + timedelta(days=1), runtime.clock.now(), days)


async def keep_scheduled(runtime: Runtime) -> None:
    """When the worker starts: yesterday's run queued (due now if RUN_AT has passed) unless
    a daily run is queued or running already."""
    now = runtime.clock.now()
    days = Days(runtime.settings.zone)
    yesterday = days.of(now) - timedelta(days=1)
    async with unit_of_work(runtime.sessionmaker) as session:
        if not await jobs.DAILY.pending(session):
            await _queue(session, yesterday, now, days)


async def _queue(session: AsyncSession, day: date, now: datetime, days: Days) -> None:
    """`day`'s run, due at RUN_AT the day after it; once (its payload is the day)."""
    await jobs.DAILY.enqueue_once(
        session, DayJob(day.isoformat()), livemode=True, now=now, delay=due(day, now, days)
    )


JOBS = (Job(jobs.DAILY, reconcile_daily),)
