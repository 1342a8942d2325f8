"""Crash safety with real processes: a `cauri worker` killed (SIGKILL) in the middle of a
delivery loses nothing; another worker makes the delivery once the lease runs out."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from cauri.runtime import Runtime
from tests.conftest import TEST_SECRET_KEY
from tests.support import make_merchant, scalar
from tests.webhooks.builders import attempts, deliveries, send_test, set_endpoint
from tests.webhooks.receiver import Answer, Receiver

CAURI = Path(sys.executable).parent / "cauri"


@contextmanager
def worker_process(database_url: str) -> Iterator[subprocess.Popen[bytes]]:
    env = os.environ | {
        "CAURI_DATABASE_URL": database_url.replace("postgresql+asyncpg://", "postgresql://", 1),
        "CAURI_WEBHOOK_ALLOW_PRIVATE": "1",
        "CAURI_SECRET_KEY": TEST_SECRET_KEY,  # the webhook secrets are sealed with it
        # The receiver hangs longer than this lease; the next worker reclaims the job after it.
        "CAURI_JOB_LEASE_SECONDS": "2",
        "CAURI_WORKER_POLL_INTERVAL": "0.2",
        "CAURI_WEBHOOK_TIMEOUT": "30",
    }
    process = subprocess.Popen(
        [str(CAURI), "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def wait_for_status(runtime: Runtime, delivery_id: str, status: str) -> None:
    deadline = time.monotonic() + 30
    sql = "SELECT status FROM webhook_deliveries WHERE id = :id"
    while await scalar(runtime, sql, id=delivery_id) != status:
        assert time.monotonic() < deadline, f"delivery never became {status}"
        await asyncio.sleep(0.1)


async def test_worker_killed_mid_delivery(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    receiver.answer(Answer(hang=True))  # the first request never gets an answer
    delivery_id = (await send_test(client, merchant))["delivery_id"]

    with worker_process(database_url) as first:
        await receiver.wait_for(1, within=30)
        first.kill()
        first.wait()
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"]) == ("pending", 0)

    with worker_process(database_url):
        await wait_for_status(runtime, delivery_id, "success")

    first_request, second_request = receiver.requests
    assert first_request.headers["x-service-delivery"] == delivery_id
    assert second_request.headers["x-service-delivery"] == delivery_id
    assert first_request.body == second_request.body
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"], entry["response_code"]) == ("success", 1, 200)
    # The killed attempt left no trace but the request the receiver saw; the job is done.
    assert [a["response_code"] for a in await attempts(runtime, delivery_id)] == [200]
    assert await scalar(runtime, "SELECT count(*) FROM jobs WHERE kind = 'webhooks.deliver'") == 0
    # What is left is what each worker keeps queued as it starts: the daily reconciliation
    # and the history's months ahead.
    left = await scalar(runtime, "SELECT array_agg(kind ORDER BY kind) FROM jobs")
    assert left == ["history.months_ahead", "reconciliation.daily"]
