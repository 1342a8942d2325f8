"""GET /events and GET /events/{id}, and the outbox: an event, its delivery and its job are
written with the state change, or not at all."""

from __future__ import annotations

import uuid

import httpx
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from cauri.events import service as events
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from tests.support import assert_error, make_merchant, scalar
from tests.webhooks.builders import EVENTS, pay, send_test, set_endpoint
from tests.webhooks.receiver import Receiver


async def test_events_listed_newest_first_with_type_filter(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    first = await pay(client, merchant)
    clock.advance(1)
    test = await send_test(client, merchant)
    clock.advance(1)
    failed = await client.post(
        "/api/v1/payments",
        json={"amount": 1000, "operator": "mtn", "phone_number": "22997000001"},
        headers=merchant.headers(),
    )
    assert failed.status_code == 402

    listed = (await client.get(EVENTS, headers=merchant.headers())).json()
    assert [e["event"] for e in listed["data"]] == [
        "payment.failed",
        "webhook.test",
        "payment.succeeded",
    ]
    assert listed["meta"]["total"] == 3
    assert listed["data"][1]["id"] == test["delivery_id"]
    for event in listed["data"]:
        assert set(event) == {"id", "event", "livemode", "created_at", "data"}
        assert event["livemode"] is False

    succeeded = (
        await client.get(EVENTS, params={"type": "payment.succeeded"}, headers=merchant.headers())
    ).json()
    assert [e["data"]["reference"] for e in succeeded["data"]] == [first["reference"]]
    paged = (
        await client.get(EVENTS, params={"per_page": 1, "page": 2}, headers=merchant.headers())
    ).json()
    assert [e["event"] for e in paged["data"]] == ["webhook.test"]
    assert paged["meta"] == {"current_page": 2, "per_page": 1, "total": 3, "last_page": 3}


async def test_an_event_of_another_merchant_or_environment_is_not_found(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    stranger = await make_merchant(runtime, name="Autre")
    event_id = (await send_test(client, merchant))["delivery_id"]
    assert (await client.get(f"{EVENTS}/{event_id}", headers=merchant.headers())).status_code == 200
    for headers in (merchant.headers(livemode=True), stranger.headers()):
        assert_error(await client.get(f"{EVENTS}/{event_id}", headers=headers), 404, "not_found")
    assert (await client.get(EVENTS, headers=stranger.headers())).json()["data"] == []
    assert (await client.get(EVENTS, headers=merchant.headers(livemode=True))).json()["data"] == []
    assert_error(
        await client.get(f"{EVENTS}/not-a-uuid", headers=merchant.headers()), 404, "not_found"
    )
    assert_error(
        await client.get(f"{EVENTS}/{uuid.uuid4()}", headers=merchant.headers()), 404, "not_found"
    )
    assert_error(await client.get(EVENTS), 401, "unauthorized")


async def test_emit_rolled_back_leaves_no_event_delivery_or_job(
    client: httpx.AsyncClient, runtime: Runtime, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)

    class Abort(Exception):
        pass

    try:
        async with unit_of_work(runtime.sessionmaker) as session:
            await events.emit(
                session,
                merchant_id=merchant.id,
                livemode=False,
                type="payment.succeeded",
                data={},
                at=runtime.clock.now(),
            )
            assert await session.scalar(text("SELECT count(*) FROM webhook_deliveries")) == 1
            raise Abort
    except Abort:
        pass
    for table in ("events", "webhook_deliveries", "jobs"):
        assert await scalar(runtime, f"SELECT count(*) FROM {table}") == 0  # noqa: S608


async def test_emit_writes_event_delivery_and_job_together(
    client: httpx.AsyncClient, runtime: Runtime, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    async with unit_of_work(runtime.sessionmaker) as session:
        event_id = await events.emit(
            session,
            merchant_id=merchant.id,
            livemode=False,
            type="payment.succeeded",
            data={"reference": "x"},
            at=runtime.clock.now(),
        )
    assert await scalar(runtime, "SELECT count(*) FROM events WHERE id = :id", id=event_id) == 1
    delivery = await scalar(
        runtime, "SELECT url FROM webhook_deliveries WHERE id = :id AND event_id = :id", id=event_id
    )
    assert delivery == receiver.url
    payload = await scalar(runtime, "SELECT payload FROM jobs WHERE kind = 'webhooks.deliver'")
    assert payload == {"delivery_id": str(event_id), "attempt": 1}
    # A delivery cannot exist without its event.
    try:
        async with unit_of_work(runtime.sessionmaker) as session:
            await session.execute(
                text(
                    "INSERT INTO webhook_deliveries (id, event_id, merchant_id, livemode, event, "
                    "url, status, attempts, series_attempts, created_at) VALUES (:id, :id, :m, "
                    "false, 'x', 'u', 'pending', 0, 0, now())"
                ),
                {"id": uuid.uuid4(), "m": merchant.id},
            )
    except IntegrityError:
        pass
    else:
        raise AssertionError("a delivery without an event was accepted")
