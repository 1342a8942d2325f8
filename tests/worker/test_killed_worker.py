"""A real `cauri worker` process killed with SIGKILL in the middle of a job: the job's
writes are lost with it, and once its lease runs out another worker runs the job again, to
completion, exactly once (DESIGN invariant 5)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from tests.worker.builders import eventually, job, runs
from tests.worker.slow_handlers import SLOW, SlowJob

ROOT = Path(__file__).resolve().parents[2]
LEASE = 2
# Generous: on a loaded two-core machine a `cauri` process takes ~10 s just to start.
STARTUP = 60


def start_worker(database_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = os.environ | {
        "CAURI_DATABASE_URL": database_url,
        "CAURI_JOB_LEASE_SECONDS": str(LEASE),
        "CAURI_WORKER_POLL_INTERVAL": "0.2",
        "PYTHONPATH": str(ROOT),
    }
    with log.open("ab") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.worker.slow_handlers"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )


async def test_a_worker_killed_mid_job_leaves_the_job_to_be_retried(
    runtime: Runtime, database_url: str, tmp_path: Path, runs_table: None
) -> None:
    key, log = uuid.uuid4().hex, tmp_path / "workers.log"
    started, release = tmp_path / "started", tmp_path / "release"
    async with unit_of_work(runtime.sessionmaker) as session:  # real time: the worker's clock
        job_id = await SLOW.enqueue(
            session, SlowJob(key, str(tmp_path)), livemode=True, now=datetime.now(UTC)
        )

    async def runs_started() -> int:
        assert first.poll() is None, log.read_text()
        return len(started.read_text().splitlines()) if started.exists() else 0

    first = start_worker(database_url, log)
    try:
        await eventually(runs_started, timeout=STARTUP)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)

    claimed = await job(runtime, job_id)
    assert claimed is not None and (claimed["status"], claimed["attempts"]) == ("running", 1)
    assert await runs(runtime, key) == [], "the killed run's writes died with it"

    release.touch()
    second = start_worker(database_url, log)
    try:

        async def done() -> bool:
            assert second.poll() is None, log.read_text()
            return await job(runtime, job_id) is None

        await eventually(done, timeout=STARTUP)
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=30) == 0, log.read_text()

    assert await runs(runtime, key) == [str(second.pid)]
    assert started.read_text().split() == [str(first.pid), str(second.pid)]
