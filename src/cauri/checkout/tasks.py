"""Jobs of the checkout domain."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.checkout import jobs
from cauri.checkout.service import checkout_sessions
from cauri.runtime import Runtime
from cauri.worker.jobs import Job


async def expire(session: AsyncSession, runtime: Runtime, job: jobs.SessionJob) -> None:
    await checkout_sessions.expire_due(session, runtime, job.reference)


async def refund_late_attempt(
    session: AsyncSession, runtime: Runtime, job: jobs.AttemptJob
) -> None:
    await checkout_sessions.refund_late_attempt(session, runtime, job.payment_id)


JOBS = (
    Job(jobs.EXPIRE, expire),
    Job(jobs.REFUND_LATE_ATTEMPT, refund_late_attempt),
)
