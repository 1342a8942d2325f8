"""Many deliveries in flight at once: a slow endpoint holds its own delivery, not the others;
concurrent events are each delivered exactly once."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from cauri.jobs import handlers
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.support import MerchantKeys, make_merchant, scalar
from tests.webhooks.builders import DELIVERIES, deliveries, pay, send_test, set_endpoint
from tests.webhooks.receiver import Answer, Receiver


@asynccontextmanager
async def running_worker(runtime: Runtime) -> AsyncIterator[None]:
    """The worker as `cauri worker` runs it: claims on NOTIFY, many jobs at once (the default
    concurrency: test deliveries get 4 slots of it)."""
    stop = asyncio.Event()
    task = asyncio.create_task(Worker(runtime, handlers()).run_forever(stop))
    try:
        yield
    finally:
        stop.set()
        await task


async def settled(client: httpx.AsyncClient, merchant: MerchantKeys, within: float) -> None:
    """Waits until every delivery of the merchant is recorded a success: the receiver sees
    a request a moment before the worker commits its outcome."""
    deadline = time.monotonic() + within
    while {e["status"] for e in await deliveries(client, merchant)} != {"success"}:
        assert time.monotonic() < deadline, "deliveries not all recorded a success in time"
        await asyncio.sleep(0.05)


async def test_a_slow_endpoint_does_not_delay_the_others(
    client: httpx.AsyncClient, runtime: Runtime, receiver: Receiver, other_receiver: Receiver
) -> None:
    slow, fast = receiver, other_receiver
    slow_answer = 5.0
    slow.default = Answer(200, delay=slow_answer)
    slow_merchant = await make_merchant(runtime, name="Lent")
    fast_merchant = await make_merchant(runtime, name="Rapide")
    await set_endpoint(client, slow_merchant, slow.url)
    await set_endpoint(client, fast_merchant, fast.url)
    for _ in range(3):
        await send_test(client, slow_merchant)
    async with running_worker(runtime):
        await slow.wait_for(3)
        # The slow endpoint now holds three deliveries open; the others go through.
        for _ in range(20):
            await send_test(client, fast_merchant)
        await fast.wait_for(20, within=slow_answer)
        all_fast_received = max(r.at for r in fast.requests)
        assert all_fast_received < min(r.at for r in slow.requests) + slow_answer
        await settled(client, fast_merchant, within=slow_answer)
        assert {e["status"] for e in await deliveries(client, slow_merchant)} == {"pending"}
    assert {e["status"] for e in await deliveries(client, slow_merchant)} == {"success"}
    # Nothing is left to do, and nothing was sent twice.
    assert await scalar(runtime, "SELECT count(*) FROM jobs") == 0
    assert len(fast.requests) == 20 and len(slow.requests) == 3


async def test_concurrent_payments_are_each_delivered_once(
    client: httpx.AsyncClient, runtime: Runtime, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    async with running_worker(runtime):
        made = await asyncio.gather(*(pay(client, merchant) for _ in range(30)))
        await receiver.wait_for(30, within=15)
        await asyncio.sleep(0.3)  # room for a duplicate to show up, if there were one

    references = Counter(json.loads(r.body)["data"]["reference"] for r in receiver.requests)
    assert set(references) == {p["reference"] for p in made}
    assert set(references.values()) == {1}
    ids = Counter(r.headers["x-service-delivery"] for r in receiver.requests)
    assert set(ids.values()) == {1}
    logged = (
        await client.get(DELIVERIES, params={"per_page": 100}, headers=merchant.headers())
    ).json()["data"]
    assert len(logged) == 30
    assert {(e["status"], e["attempts"]) for e in logged} == {("success", 1)}
    # Each delivery recorded one attempt row, no more.
    assert await scalar(runtime, "SELECT count(*) FROM webhook_attempts") == 30


async def test_no_database_connection_is_held_during_the_http_call(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    receiver.default = Answer(200, delay=1.0)
    await send_test(client, merchant)

    drained = asyncio.create_task(worker.drain())
    await receiver.wait_for(1)
    # The job's transaction is open, the endpoint is answering: the pool lends nothing.
    assert runtime.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    assert await drained == 1
    assert {e["status"] for e in await deliveries(client, merchant)} == {"success"}
