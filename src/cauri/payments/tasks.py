"""Jobs of the payments domain."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.payments import jobs
from cauri.payments.service import payments
from cauri.runtime import Runtime
from cauri.worker.jobs import Job


async def check_status(session: AsyncSession, runtime: Runtime, job: jobs.PaymentJob) -> None:
    await payments.check_status(session, runtime, uuid.UUID(job.payment_id))


async def expire_card(session: AsyncSession, runtime: Runtime, job: jobs.PaymentJob) -> None:
    await payments.expire_card(session, runtime, uuid.UUID(job.payment_id))


JOBS = (Job(jobs.CHECK_STATUS, check_status), Job(jobs.EXPIRE_CARD, expire_card))
