"""The delivery job: one attempt of one delivery.

The worker runs each job in one session transaction, and a session checks out its
connection on its first query; this handler's first query on that session comes after the
HTTP call. What the attempt needs is read in a short session of its own before, so no
connection is held while an endpoint takes its time (up to CAURI_WEBHOOK_TIMEOUT). An
endpoint whose breaker is open gets no call: the attempt is postponed (cauri.webhooks.breaker).
"""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.runtime import Runtime
from cauri.webhooks import breaker, delivery, jobs, service, url_safety
from cauri.worker.jobs import Job


async def deliver(session: AsyncSession, runtime: Runtime, job: jobs.Attempt) -> None:
    pending = await service.pending_attempt(
        runtime.engine, runtime.settings, uuid.UUID(job.delivery_id), job.attempt
    )
    if pending is None:
        return
    held_until = await breaker.admit(
        runtime.sessionmaker, pending.circuit, now=runtime.clock.now(), settings=runtime.settings
    )
    if held_until is not None:
        await service.postpone(session, runtime, pending, held_until)
        return
    started_at = runtime.clock.now()
    outcome = await delivery.send(
        pending.notification,
        timestamp=int(started_at.timestamp()),
        time_limit=runtime.settings.webhook_timeout,
        connect_limit=runtime.settings.webhook_connect_timeout,
        reach=url_safety.Reach.configured(runtime.settings),
    )
    await service.record_attempt(session, runtime, pending, started_at, outcome)


JOBS = (Job(jobs.DELIVER, deliver),)
