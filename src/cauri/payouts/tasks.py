"""Jobs of the payouts domain."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.disbursements.jobs import RowJob
from cauri.payouts import jobs
from cauri.payouts.service import payouts
from cauri.runtime import Runtime
from cauri.worker.jobs import Job


async def check_status(session: AsyncSession, runtime: Runtime, job: RowJob) -> None:
    await payouts.check_status(session, runtime, job.reference)


async def send_approved(session: AsyncSession, runtime: Runtime, job: RowJob) -> None:
    await payouts.send_approved(session, runtime, job.reference)


JOBS = (Job(jobs.CHECK_STATUS, check_status), Job(jobs.SEND_APPROVED, send_approved))
