"""A job kind for a real worker process: `python -m tests.worker.slow_handlers` runs the
service's worker with every kind of the service plus `test.slow` (handlers are passed in,
as `cauri worker` passes the service's own).

`test.slow` notes each start in `<dir>/started` (outside any transaction, so the test sees
it), writes a row of test_job_runs in its job's transaction, then blocks until
`<dir>/release` exists: a worker killed meanwhile never commits that row.
"""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession

from cauri import jobs
from cauri.config import get_settings
from cauri.runtime import Runtime
from cauri.worker.jobs import Job, JobKind
from cauri.worker.runner import Worker
from tests.worker.builders import INSERT_RUN


@dataclass(frozen=True)
class SlowJob:
    key: str
    dir: str


SLOW = JobKind("test.slow", SlowJob)


async def slow(session: AsyncSession, runtime: Runtime, job: SlowJob) -> None:
    directory = Path(job.dir)
    with (directory / "started").open("a") as started:
        started.write(f"{os.getpid()}\n")
    await session.execute(INSERT_RUN, {"key": job.key, "run": str(os.getpid())})
    # The release comes from another process: a file is polled, no Event can carry it.
    while not (directory / "release").exists():  # noqa: ASYNC110
        await asyncio.sleep(0.05)


async def main() -> None:
    runtime = Runtime.build(get_settings())
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await Worker(runtime, jobs.handlers([Job(SLOW, slow)])).run_forever(stop)
    finally:
        await runtime.close()


if __name__ == "__main__":
    asyncio.run(main())
