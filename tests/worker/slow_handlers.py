"""A job kind for a real `cauri worker` process, loaded with
CAURI_EXTRA_JOB_HANDLERS="tests.worker.slow_handlers:HANDLERS".

`test.slow` notes each start in `<dir>/started` (outside any transaction, so the test sees
it), writes a row of test_job_runs in its job's transaction, then blocks until
`<dir>/release` exists: a worker killed meanwhile never commits that row.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.runtime import Runtime
from tests.worker.builders import INSERT_RUN

SLOW = "test.slow"


async def slow(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
    directory = Path(payload["dir"])
    with (directory / "started").open("a") as started:
        started.write(f"{os.getpid()}\n")
    await session.execute(INSERT_RUN, {"key": payload["key"], "run": str(os.getpid())})
    # The release comes from another process: a file is polled, no Event can carry it.
    while not (directory / "release").exists():  # noqa: ASYNC110
        await asyncio.sleep(0.05)


HANDLERS = {SLOW: slow}
