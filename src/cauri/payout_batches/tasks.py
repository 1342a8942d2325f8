"""Jobs of the payout batches domain."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.payout_batches import jobs
from cauri.payout_batches.jobs import BatchJob
from cauri.payout_batches.service import payout_batches
from cauri.runtime import Runtime
from cauri.worker.jobs import Job


async def process(session: AsyncSession, runtime: Runtime, job: BatchJob) -> None:
    await payout_batches.process(session, runtime, job.reference)


async def check_completion(session: AsyncSession, runtime: Runtime, job: BatchJob) -> None:
    await payout_batches.complete_if_final(session, runtime, job.reference)


JOBS = (Job(jobs.PROCESS, process), Job(jobs.CHECK_COMPLETION, check_completion))
