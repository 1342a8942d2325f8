"""Issue 12: the delivery log says what a merchant needs to act (the resource, the last error,
when the next attempt is due), filters by status, and a pending delivery can be retried now,
over real HTTP to a receiver on loopback."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payouts.builders import PAYOUTS, payout_body, top_up
from tests.support import assert_error, make_merchant, scalar
from tests.webhooks.builders import DELIVERIES, deliveries, pay, send_test, set_endpoint
from tests.webhooks.receiver import Answer, Receiver


def _at(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


async def _change_jobs(runtime: Runtime, sql: str, delivery_id: str) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        changed = await session.execute(text(sql), {"id": delivery_id})
        assert changed.rowcount == 1  # type: ignore[attr-defined]


async def _deliver_jobs(runtime: Runtime, delivery_id: str) -> list[tuple[str, int]]:
    """The delivery's jobs as the queue holds them: (status, attempt)."""
    rows = await scalar(
        runtime,
        "SELECT coalesce(json_agg(json_build_array(status, payload->'attempt')), '[]') "
        "FROM jobs WHERE kind = 'webhooks.deliver' AND payload->>'delivery_id' = :id",
        id=delivery_id,
    )
    return [(status, attempt) for status, attempt in rows]


async def test_entry_shows_resource_last_error_and_next_attempt(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    receiver: Receiver,
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    receiver.default = Answer(503)
    payment = await pay(client, merchant)
    await worker.drain()

    [entry] = await deliveries(client, merchant)
    assert (entry["event"], entry["resource"]) == ("payment.succeeded", payment["reference"])
    assert (entry["status"], entry["attempts"], entry["response_code"]) == ("pending", 1, 503)
    assert entry["last_error"] == "Réponse HTTP 503."
    # The spec's schedule: the second attempt 10 s after the first.
    assert _at(entry["next_attempt_at"]) == clock.now() + timedelta(seconds=10)

    receiver.default = Answer(200)
    clock.advance(10)
    await worker.drain()
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"], entry["response_code"]) == ("success", 2, 200)
    # Settled: no error to show and nothing more to come.
    assert (entry["last_error"], entry["next_attempt_at"]) == (None, None)


async def test_resource_of_each_kind_of_event(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    await top_up(runtime, merchant.id, 10_000)
    payout = await client.post(PAYOUTS, json=payout_body(), headers=merchant.headers())
    assert payout.status_code == 201, payout.text
    test = await send_test(client, merchant)
    await worker.drain()
    by_event = {entry["event"]: entry for entry in await deliveries(client, merchant)}
    assert by_event["payout.succeeded"]["resource"] == payout.json()["data"]["reference"]
    # webhook.test is about no resource.
    assert by_event["webhook.test"]["id"] == test["delivery_id"]
    assert by_event["webhook.test"]["resource"] is None


async def test_connection_error_is_the_last_error(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    with Receiver() as gone:
        url = gone.url
    await set_endpoint(client, merchant, url)
    await send_test(client, merchant)
    await worker.drain()
    [entry] = await deliveries(client, merchant)
    assert entry["response_code"] is None
    assert entry["last_error"].startswith("Échec de connexion")


async def test_pending_delivery_is_retried_at_once_and_not_twice(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    receiver: Receiver,
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    receiver.default = Answer(500)
    await pay(client, merchant)
    await worker.drain()
    [entry] = await deliveries(client, merchant)
    assert entry["status"] == "pending"
    # The next attempt waits 10 s on the schedule.
    assert await _deliver_jobs(runtime, entry["id"]) == [("queued", 2)]

    # The merchant fixes the endpoint and asks for it now.
    receiver.default = Answer(200)
    response = await client.post(f"{DELIVERIES}/{entry['id']}/retry", headers=merchant.headers())
    assert response.status_code == 200, response.text
    retried = response.json()["data"]
    assert (retried["status"], retried["attempts"]) == ("pending", 1)
    assert _at(retried["next_attempt_at"]) == clock.now()
    assert retried["last_error"] == "Réponse HTTP 500."
    # The waiting job was brought forward, not doubled.
    assert await _deliver_jobs(runtime, entry["id"]) == [("queued", 2)]

    await worker.drain()  # no time passes
    [_, request] = await receiver.wait_for(2)
    assert request.headers["x-service-delivery"] == entry["id"]
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"]) == ("success", 2)

    # Nothing of the old schedule is left to send.
    for delay in runtime.settings.retry_delays:
        clock.advance(delay)
        await worker.drain()
    assert len(receiver.requests) == 2

    # A delivery that succeeded has nothing to retry.
    again = await client.post(f"{DELIVERIES}/{entry['id']}/retry", headers=merchant.headers())
    assert_error(again, 409, "conflict")


async def test_retry_leaves_an_attempt_under_way_alone(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    test = await send_test(client, merchant)
    delivery = test["delivery_id"]
    # A worker holds the first attempt (its HTTP call in flight).
    await _change_jobs(
        runtime,
        "UPDATE jobs SET status = 'running', attempts = 1, "
        "locked_until = now() + interval '1 hour' WHERE payload->>'delivery_id' = :id",
        delivery,
    )
    response = await client.post(f"{DELIVERIES}/{delivery}/retry", headers=merchant.headers())
    assert response.status_code == 200, response.text
    # No second job: the endpoint would get the same attempt twice.
    assert await _deliver_jobs(runtime, delivery) == [("running", 1)]


async def test_retry_queues_a_pending_delivery_whose_job_is_gone(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    delivery = (await send_test(client, merchant))["delivery_id"]
    # Its job gave up (a worker crashed on each of its attempts, say).
    await _change_jobs(
        runtime, "UPDATE jobs SET status = 'failed' WHERE payload->>'delivery_id' = :id", delivery
    )
    await worker.drain()
    assert receiver.requests == []
    response = await client.post(f"{DELIVERIES}/{delivery}/retry", headers=merchant.headers())
    assert response.status_code == 200, response.text
    await worker.drain()
    [request] = await receiver.wait_for(1)
    assert request.headers["x-service-delivery"] == delivery
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"]) == ("success", 1)


async def test_log_filters_by_status_newest_first(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    receiver: Receiver,
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    delivered = [(await send_test(client, merchant))["delivery_id"]]
    await worker.drain()
    clock.advance(1)
    delivered.append((await send_test(client, merchant))["delivery_id"])
    await worker.drain()
    clock.advance(1)
    waiting = (await send_test(client, merchant))["delivery_id"]  # no worker runs it

    async def listed(**query: str) -> list[str]:
        response = await client.get(DELIVERIES, params=query, headers=merchant.headers())
        assert response.status_code == 200, response.text
        return [entry["id"] for entry in response.json()["data"]]

    assert await listed() == [waiting, delivered[1], delivered[0]]
    assert await listed(status="success") == [delivered[1], delivered[0]]
    assert await listed(status="pending") == [waiting]
    assert await listed(status="failed") == []
    for query, field in (({"status": "delivered"}, "status"), ({"event": "x"}, "event")):
        response = await client.get(DELIVERIES, params=query, headers=merchant.headers())
        assert list(assert_error(response, 422, "invalid_request")["details"]) == [field]
