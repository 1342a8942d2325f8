"""Jobs of the plans domain: the expiry due at expires_at, the refund of a cancellation (its
start, then its delayed outcome). The refund of an instalment that succeeded late is the
refunds domain's job (cauri.refunds.tasks)."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.disbursements.jobs import RowJob
from cauri.plans import jobs, settlement
from cauri.plans.service import plans
from cauri.runtime import Runtime
from cauri.worker.jobs import Job


async def expire(session: AsyncSession, runtime: Runtime, job: jobs.PlanJob) -> None:
    await plans.expire(session, runtime, uuid.UUID(job.plan_id))


async def start_refund(session: AsyncSession, runtime: Runtime, job: jobs.PlanJob) -> None:
    await settlement.start_refund(session, runtime, uuid.UUID(job.plan_id))


async def check_refund(session: AsyncSession, runtime: Runtime, job: RowJob) -> None:
    await settlement.check_refund(session, runtime, job.reference)


JOBS = (
    Job(jobs.EXPIRE, expire),
    Job(jobs.REFUND, start_refund),
    Job(jobs.REFUND_STATUS, check_refund),
)
