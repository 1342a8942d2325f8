"""Jobs of the refunds domain, and the refund of an instalment that succeeded after its
plan's cancellation began (a kind the plans domain queues: only refunds can pay it)."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.disbursements.jobs import RowJob
from cauri.plans import jobs as plan_jobs
from cauri.refunds import jobs
from cauri.refunds.service import refunds
from cauri.runtime import Runtime
from cauri.worker.jobs import Job


async def check_status(session: AsyncSession, runtime: Runtime, job: RowJob) -> None:
    await refunds.check_status(session, runtime, job.reference)


async def refund_late_instalment(
    session: AsyncSession, runtime: Runtime, job: plan_jobs.InstalmentJob
) -> None:
    await refunds.refund_late_instalment(session, runtime, uuid.UUID(job.payment_id))


JOBS = (
    Job(jobs.CHECK_STATUS, check_status),
    Job(plan_jobs.REFUND_LATE_INSTALMENT, refund_late_instalment),
)
