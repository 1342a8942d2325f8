"""GET /health and GET /ready (issue 12, operability): unauthenticated, outside /api/v1;
readiness wants the database, the schema this code expects, and a recent worker heartbeat."""

from __future__ import annotations

import asyncio

import httpx
from sqlalchemy import text

from cauri.kit import migrate
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.worker import heartbeat
from cauri.worker.runner import Worker


async def test_health_answers_without_a_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/health")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


async def test_ready_wants_a_worker_and_the_schema_of_this_code(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    response = await client.get("/ready")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == "ok"
    assert response.json()["checks"]["migrations"] == "ok"
    assert response.json()["checks"]["worker"].startswith("no worker heartbeat")
    # A running worker beats at once, and says goodbye when it stops.
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run_forever(stop))
    async with asyncio.timeout(10):
        while (await client.get("/ready")).status_code != 200:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    assert (await client.get("/ready")).json() == {
        "status": "ready",
        "checks": {"database": "ok", "migrations": "ok", "worker": "ok"},
    }
    stop.set()
    await running
    assert (await client.get("/ready")).status_code == 503
    # A beat older than the allowance does not count.
    await heartbeat.beat(runtime.sessionmaker, "old-worker")
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text("UPDATE worker_heartbeats SET beat_at = now() - interval '2 minutes'")
        )
    assert (await client.get("/ready")).status_code == 503


async def test_ready_says_when_the_schema_is_not_this_codes(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await heartbeat.beat(runtime.sessionmaker, "a-worker")
    set_version = text("UPDATE alembic_version SET version_num = :version")
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(set_version, {"version": "0013_exchange_recency"})
    try:
        response = await client.get("/ready")
        assert response.status_code == 503
        assert response.json()["checks"]["migrations"].startswith("at 0013_exchange_recency")
    finally:
        # Back to this code's head, whatever it is: later tests migrate the same database.
        async with unit_of_work(runtime.sessionmaker) as session:
            await session.execute(set_version, {"version": migrate.head()})
