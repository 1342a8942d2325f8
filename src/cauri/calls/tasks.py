"""Jobs of the call protocol: the status queries of operations still pending."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls import jobs
from cauri.calls.service import poll
from cauri.runtime import Runtime
from cauri.worker.jobs import Job


async def poll_operation(session: AsyncSession, runtime: Runtime, job: jobs.OperationJob) -> None:
    await poll(session, runtime, uuid.UUID(job.operation_id), scheduled=job.scheduled)


JOBS = (Job(jobs.POLL, poll_operation),)
