"""A process killed with SIGKILL between the operator call and its apply (issue 9, part 5):
the API while MTN holds its request to pay, a worker while MTN holds its transfer. Nothing is
lost (the recorded operation's status queries settle it) and nothing is sent or paid twice.
Real `cauri` processes, MTN's contract fake, the ledger reconciled after each test."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.cli import CAURI
from tests.conftest import TEST_SECRET_KEY
from tests.fakes.mtn_momo import MtnMomoFake
from tests.operators.mtn_live import NUMBER, mtn_fake, wire
from tests.payments.builders import merchant_available
from tests.payouts.builders import PAYOUTS, approve, set_limits, top_up
from tests.support import free_port, make_merchant, momo_body, scalar

STARTUP = 60  # seconds: a `cauri` process on a loaded two-core machine starts slowly


@pytest.fixture
def fake() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        fake.callback_mode = "drop"  # only status queries settle: the harder case
        yield fake


def start(database_url: str, log: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAURI_")} | {
        "CAURI_DATABASE_URL": database_url.replace("postgresql+asyncpg://", "postgresql://"),
        "CAURI_SECRET_KEY": TEST_SECRET_KEY,
        "CAURI_OPERATOR_TIMEOUT": "120",
        "CAURI_JOB_LEASE_SECONDS": "2",
        "CAURI_WORKER_POLL_INTERVAL": "0.2",
    }
    with log.open("ab") as output:
        return subprocess.Popen(
            [str(CAURI), *args], env=env, stdout=output, stderr=subprocess.STDOUT
        )


async def until(
    condition: Callable[[], object], process: subprocess.Popen[bytes], log: Path
) -> None:
    """Waits for `condition` (another process makes it true) while `process` lives."""
    async with asyncio.timeout(STARTUP):
        while not condition():
            assert process.poll() is None, output_of(log)
            await asyncio.sleep(0.1)


def output_of(log: Path) -> str:
    return log.read_text()


def kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


async def test_the_api_killed_while_mtn_holds_its_request_to_pay(
    runtime: Runtime, worker: Worker, fake: MtnMomoFake, database_url: str, tmp_path: Path
) -> None:
    await wire(runtime, fake)
    merchant = await make_merchant(runtime)
    fake.fault("hang_after_accept", path="requesttopay")
    port, log = free_port(), tmp_path / "serve.log"
    server = start(database_url, log, "serve", "--no-worker", "--port", str(port))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:

            def answers() -> bool:
                try:
                    return httpx.get(f"http://127.0.0.1:{port}/api/v1/nothing").status_code > 0
                except httpx.HTTPError:
                    return False

            await until(answers, server, log)
            request = asyncio.create_task(
                client.post(
                    "/api/v1/payments",
                    json=momo_body(phone_number=NUMBER),
                    headers=merchant.headers(livemode=True),
                    timeout=120,
                )
            )
            await until(lambda: fake.received("collect"), server, log)
            kill(server)  # MTN accepted; Cauri never learnt it
            with pytest.raises(httpx.HTTPError):
                await request
    finally:
        if server.poll() is None:
            kill(server)

    reference = str(await scalar(runtime, "SELECT id FROM payments"))
    assert await scalar(runtime, "SELECT status FROM payments") == "pending"
    assert await scalar(runtime, "SELECT count(*) FROM operator_operations") == 1
    # The first status query (queued with the operation, in real time) settles it.
    runtime.clock.advance(60)  # type: ignore[attr-defined]
    await worker.drain()
    assert await scalar(runtime, "SELECT status FROM payments") == "succeeded"
    assert [t.reference for t in fake.received("collect")] == [reference]
    assert len(fake.posts("collect")) == 1
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000


async def test_a_worker_killed_while_mtn_holds_its_transfer(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    database_url: str,
    tmp_path: Path,
) -> None:
    await wire(runtime, fake)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 50_000, livemode=True)
    await set_limits(runtime, merchant.id, approval_threshold=500)
    # A payout held for approval: the CLI's approval debits it, the worker sends it.
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "mtn"}
    response = await client.post(PAYOUTS, json=body, headers=merchant.headers(livemode=True))
    assert response.status_code == 201, response.text
    reference = response.json()["data"]["reference"]
    await approve(runtime, reference)  # its send job is due now, for the worker process
    assert await merchant_available(runtime, merchant.id, livemode=True) == 49_000

    fake.fault("hang_after_accept", path="transfer")
    log = tmp_path / "worker.log"
    first = start(database_url, log, "worker")
    try:
        await until(lambda: fake.received("transfer"), first, log)
    finally:
        kill(first)  # MTN accepted the transfer; the worker never recorded its answer
    async with runtime.sessionmaker() as session:
        jobs = (await session.execute(text("SELECT kind, status FROM jobs"))).all()
    assert ("payouts.send_approved", "running") in jobs

    # Another worker, once the lease has run out and the first status query is due.
    runtime.clock.advance(60)  # type: ignore[attr-defined]
    await worker.drain()
    assert await scalar(runtime, "SELECT status FROM payouts") == "succeeded"
    assert len(fake.posts("transfer")) == 1, "the re-run job sent nothing again"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 49_000
