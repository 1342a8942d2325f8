"""Deliveries over real HTTP to receivers on loopback: headers, signature, retries, the log."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import time
from datetime import timedelta

import httpx
import stripe

from cauri.config import Settings
from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.webhooks import delivery, url_safety
from cauri.worker.runner import Worker
from cauri_client import Event
from cauri_client import webhooks as sdk
from tests.support import free_port, make_merchant, scalar, with_settings
from tests.webhooks.builders import (
    api_client,
    attempts,
    deliveries,
    pay,
    run_schedule,
    send_test,
    set_endpoint,
    worker_for,
)
from tests.webhooks.receiver import Answer, Receiver


async def test_headers_envelope_and_signature(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    secret = (await set_endpoint(client, merchant, receiver.url))["secret"]
    payment = await pay(client, merchant)
    await worker.drain()

    [request] = await receiver.wait_for(1)
    headers = request.headers
    event = json.loads(request.body)
    assert set(event) == {"id", "event", "livemode", "created_at", "data"}
    assert event["event"] == "payment.succeeded"
    assert event["livemode"] is False
    assert event["data"]["reference"] == payment["reference"]
    # Webhook payment objects add the country of the payment mode (spec: Payment object).
    assert event["data"]["payment_mode"]["country_code"] == "BJ"
    assert event["data"]["payment_mode"]["country"]
    assert headers["x-service-event"] == "payment.succeeded"
    assert headers["x-service-delivery"] == event["id"]
    assert headers["user-agent"] == "Service-Webhooks/1.0"
    assert headers["content-type"] == "application/json"

    signature = headers["x-service-signature"]
    timestamp, v1 = (part.split("=", 1)[1] for part in signature.split(","))
    expected = hmac.new(
        secret.encode(), f"{timestamp}.".encode() + request.body, hashlib.sha256
    ).hexdigest()
    assert v1 == expected
    assert abs(int(timestamp) - time.time()) < 60
    # Our SDK and Stripe's verifier (same t/v1 scheme) both accept the raw body as received.
    assert sdk.verify(request.body, signature, secret) == Event.from_json(event)
    assert stripe.WebhookSignature.verify_header(
        request.body.decode(), signature, secret, tolerance=300
    )
    # The event as delivered is the event as the API shows it.
    shown = await client.get(f"/api/v1/events/{event['id']}", headers=merchant.headers())
    assert shown.json()["data"] == event


async def test_one_attempt_on_200(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    receiver: Receiver,
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    await pay(client, merchant)
    await run_schedule(worker, clock, runtime)

    assert len(receiver.requests) == 1
    [entry] = await deliveries(client, merchant)
    assert entry["status"] == "success"
    assert entry["attempts"] == 1
    assert entry["response_code"] == 200
    assert entry["delivered_at"] is not None
    assert entry["url"] == receiver.url
    assert entry["event"] == "payment.succeeded"
    [attempt] = await attempts(runtime, entry["id"])
    assert attempt["response_code"] == 200 and attempt["error"] is None


async def test_retries_on_500_follow_the_schedule_then_fail(
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
    assert len(receiver.requests) == 1

    for number, delay in enumerate(runtime.settings.retry_delays, start=2):
        # Not a second before its delay (spec: 10 s, 1 min, 5 min, 30 min) ...
        clock.advance(delay - 1)
        await worker.drain()
        assert len(receiver.requests) == number - 1
        [entry] = await deliveries(client, merchant)
        assert entry["status"] == "pending"
        assert entry["attempts"] == number - 1
        # ... and on time.
        clock.advance(1)
        await worker.drain()
        assert len(receiver.requests) == number

    clock.advance(timedelta(days=1).total_seconds())
    await worker.drain()
    assert len(receiver.requests) == 5
    [entry] = await deliveries(client, merchant)
    assert entry["status"] == "failed"
    assert entry["attempts"] == 5
    assert entry["response_code"] == 500
    assert entry["delivered_at"] is None
    logged = await attempts(runtime, entry["id"])
    assert [a["number"] for a in logged] == [1, 2, 3, 4, 5]
    assert all(a["response_code"] == 500 and a["error"] for a in logged)
    # The id is stable across retries, and it is the event's id.
    ids = {r.headers["x-service-delivery"] for r in receiver.requests}
    assert ids == {entry["id"]}
    assert {json.loads(r.body)["id"] for r in receiver.requests} == ids


async def test_success_after_failures_stops_retrying(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    receiver: Receiver,
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    receiver.answer(503, 404)
    await pay(client, merchant)
    await run_schedule(worker, clock, runtime)

    assert len(receiver.requests) == 3
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"], entry["response_code"]) == ("success", 3, 200)
    codes = [a["response_code"] for a in await attempts(runtime, entry["id"])]
    assert codes == [503, 404, 200]


async def test_timeout_is_a_failure(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, receiver: Receiver
) -> None:
    quick = with_settings(runtime, webhook_timeout=0.5)
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    receiver.default = Answer(200, delay=2.0)
    await pay(client, merchant)
    await run_schedule(worker_for(quick), clock, quick)

    assert len(receiver.requests) == 5
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"], entry["response_code"]) == ("failed", 5, None)
    for attempt in await attempts(runtime, entry["id"]):
        assert attempt["response_code"] is None
        assert "délai" in attempt["error"]
        assert attempt["duration_ms"] < 1500


async def test_connection_refused_is_retried_then_failed(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, f"http://127.0.0.1:{free_port()}/hooks")
    await pay(client, merchant)
    await worker.drain()
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"]) == ("pending", 1)
    await run_schedule(worker, clock, runtime)

    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"], entry["response_code"]) == ("failed", 5, None)
    assert all("connexion" in a["error"] for a in await attempts(runtime, entry["id"]))


async def test_callback_url_takes_priority_for_that_payment_only(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    receiver: Receiver,
    other_receiver: Receiver,
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    with_callback = await pay(client, merchant, callback_url=other_receiver.url)
    plain = await pay(client, merchant)
    await worker.drain()

    [to_callback] = await other_receiver.wait_for(1)
    [to_endpoint] = await receiver.wait_for(1)
    assert json.loads(to_callback.body)["data"]["reference"] == with_callback["reference"]
    assert json.loads(to_endpoint.body)["data"]["reference"] == plain["reference"]
    urls = {entry["url"] for entry in await deliveries(client, merchant)}
    assert urls == {receiver.url, other_receiver.url}


async def test_callback_url_is_delivered_without_an_endpoint(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    secret = (await client.get("/api/v1/webhooks/endpoint", headers=merchant.headers())).json()[
        "data"
    ]["secret"]
    await pay(client, merchant, callback_url=receiver.url)
    await worker.drain()
    [request] = await receiver.wait_for(1)
    # Signed with the environment's secret, like any notification of that environment.
    sdk.verify(request.body, request.headers["x-service-signature"], secret)


async def test_test_and_live_endpoints_and_secrets_are_separate(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    receiver: Receiver,
    other_receiver: Receiver,
) -> None:
    merchant = await make_merchant(runtime)
    test_config = await set_endpoint(client, merchant, receiver.url)
    live_config = await set_endpoint(client, merchant, other_receiver.url, livemode=True)
    assert test_config["secret"] != live_config["secret"]

    await send_test(client, merchant)
    await send_test(client, merchant, livemode=True)
    await worker.drain()

    [test_request] = await receiver.wait_for(1)
    [live_request] = await other_receiver.wait_for(1)
    assert json.loads(test_request.body)["livemode"] is False
    assert json.loads(live_request.body)["livemode"] is True
    sdk.verify(
        test_request.body, test_request.headers["x-service-signature"], test_config["secret"]
    )
    sdk.verify(
        live_request.body, live_request.headers["x-service-signature"], live_config["secret"]
    )
    try:
        sdk.verify(
            live_request.body, live_request.headers["x-service-signature"], test_config["secret"]
        )
    except sdk.InvalidSignature:
        pass
    else:
        raise AssertionError("a live notification verified with the test secret")
    # Each key sees its own environment's log only.
    [test_entry] = await deliveries(client, merchant)
    [live_entry] = await deliveries(client, merchant, livemode=True)
    assert test_entry["url"] == receiver.url and live_entry["url"] == other_receiver.url


async def test_disabled_endpoint_gets_no_delivery(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    await set_endpoint(client, merchant, None)
    payment = await pay(client, merchant)
    await worker.drain()

    assert receiver.requests == []
    assert await deliveries(client, merchant) == []
    assert await scalar(runtime, "SELECT count(*) FROM webhook_deliveries") == 0
    assert await scalar(runtime, "SELECT count(*) FROM jobs WHERE kind = 'webhooks.deliver'") == 0
    # The event itself is recorded all the same.
    events = (await client.get("/api/v1/events", headers=merchant.headers())).json()["data"]
    assert [e["data"]["reference"] for e in events] == [payment["reference"]]


async def test_rotation_applies_to_later_attempts(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    receiver: Receiver,
) -> None:
    merchant = await make_merchant(runtime)
    old = (await set_endpoint(client, merchant, receiver.url))["secret"]
    receiver.answer(500)
    await pay(client, merchant)
    await worker.drain()
    new = (await set_endpoint(client, merchant, receiver.url, rotate=True))["secret"]
    assert new != old and new.startswith("whsec_")
    clock.advance(runtime.settings.retry_delays[0])
    await worker.drain()

    first, second = await receiver.wait_for(2)
    sdk.verify(first.body, first.headers["x-service-signature"], old)
    sdk.verify(second.body, second.headers["x-service-signature"], new)
    assert first.body == second.body


async def test_private_address_refused_without_allow_private(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, receiver: Receiver
) -> None:
    """2130706433 is not an IP address to a URL parser, but the resolver turns it into
    127.0.0.1: the address is checked as resolved, and the attempt refused before any
    connection."""
    strict = with_settings(runtime, webhook_allow_private=False)
    merchant = await make_merchant(runtime)
    async with api_client(strict) as strict_client:
        await set_endpoint(strict_client, merchant, f"https://2130706433:{receiver.port}/hooks")
    await pay(client, merchant)
    await run_schedule(worker_for(strict), clock, strict)

    assert receiver.requests == []
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"], entry["response_code"]) == ("failed", 5, None)
    logged = await attempts(runtime, entry["id"])
    assert all("127.0.0.1" in a["error"] and "publique" in a["error"] for a in logged)


async def test_webhook_test_event_is_delivered(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    secret = (await set_endpoint(client, merchant, receiver.url))["secret"]
    result = await send_test(client, merchant)
    assert result["sent"] is True
    assert result["url"] == receiver.url
    assert "reason" not in result
    await worker.drain()

    [request] = await receiver.wait_for(1)
    event = sdk.verify(request.body, request.headers["x-service-signature"], secret)
    assert event.id == result["delivery_id"] == request.headers["x-service-delivery"]
    assert event.event == "webhook.test" == request.headers["x-service-event"]
    assert isinstance(event.data["message"], str) and event.data["message"]
    [entry] = await deliveries(client, merchant)
    assert (entry["id"], entry["status"]) == (result["delivery_id"], "success")


async def test_webhook_test_without_endpoint(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    result = await send_test(client, merchant)
    assert result["sent"] is False
    assert result["url"] is None
    assert isinstance(result["reason"], str) and result["reason"]
    # delivery_id is the recorded test event's id: a UUID as the spec types it.
    shown = await client.get(f"/api/v1/events/{result['delivery_id']}", headers=merchant.headers())
    assert shown.json()["data"]["event"] == "webhook.test"
    await worker.drain()
    assert await deliveries(client, merchant) == []


async def test_merchant_retry_of_a_failed_delivery(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    receiver: Receiver,
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, f"http://127.0.0.1:{free_port()}/broken")
    await pay(client, merchant)
    await worker.drain()
    [entry] = await deliveries(client, merchant)
    retry_url = f"/api/v1/webhooks/deliveries/{entry['id']}/retry"
    await run_schedule(worker, clock, runtime)

    # The merchant fixes the endpoint, then asks for the failed delivery again.
    await set_endpoint(client, merchant, receiver.url)
    response = await client.post(retry_url, headers=merchant.headers())
    assert response.status_code == 200, response.text
    assert (response.json()["data"]["status"], response.json()["data"]["url"]) == (
        "pending",
        receiver.url,
    )
    await worker.drain()
    [request] = await receiver.wait_for(1)
    assert request.headers["x-service-delivery"] == entry["id"]
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"]) == ("success", 6)
    again = await client.post(retry_url, headers=merchant.headers())
    assert again.status_code == 409

    # Another environment's or merchant's key does not find it.
    stranger = await make_merchant(runtime, name="Autre")
    for headers in (merchant.headers(livemode=True), stranger.headers()):
        missing = await client.post(retry_url, headers=headers)
        assert missing.status_code == 404
    assert (
        await client.post("/api/v1/webhooks/deliveries/nope/retry", headers=merchant.headers())
    ).status_code == 404


async def test_retried_delivery_gets_a_new_series(
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
    await run_schedule(worker, clock, runtime)
    [entry] = await deliveries(client, merchant)
    assert entry["status"] == "failed"

    response = await client.post(
        f"/api/v1/webhooks/deliveries/{entry['id']}/retry", headers=merchant.headers()
    )
    assert response.status_code == 200
    await run_schedule(worker, clock, runtime)
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"]) == ("failed", 10)
    assert len(receiver.requests) == 10


async def test_deliveries_listed_newest_first_and_paginated(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    made = []
    for _ in range(3):
        made.append((await send_test(client, merchant))["delivery_id"])
        clock.advance(1)
    response = await client.get(
        "/api/v1/webhooks/deliveries", params={"per_page": 2}, headers=merchant.headers()
    )
    body = response.json()
    assert [e["id"] for e in body["data"]] == made[::-1][:2]
    assert body["meta"] == {"current_page": 1, "per_page": 2, "total": 3, "last_page": 2}
    assert all(e["status"] == "pending" and e["attempts"] == 0 for e in body["data"])


DEFAULTS = Settings.model_fields


async def test_an_address_that_never_completes_the_handshake_gives_up_after_3_s() -> None:
    """A listening socket whose accept queue is full: the kernel drops further handshakes,
    as a dead host does. The attempt ends on the connect timeout, not the 10 s limit."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        fillers = [socket.socket() for _ in range(4)]
        for filler in fillers:
            filler.setblocking(False)
            filler.connect_ex(server.getsockname())
        try:
            outcome = await delivery.send(
                delivery.Notification(
                    url=f"http://127.0.0.1:{server.getsockname()[1]}/hooks",
                    event="webhook.test",
                    delivery_id="d",
                    body=b"{}",
                    secret="whsec_test",
                ),
                timestamp=int(time.time()),
                time_limit=DEFAULTS["webhook_timeout"].default,
                connect_limit=DEFAULTS["webhook_connect_timeout"].default,
                reach=url_safety.Reach.PRIVATE,
            )
        finally:
            for filler in fillers:
                filler.close()
    assert DEFAULTS["webhook_connect_timeout"].default <= 3
    assert outcome.response_code is None
    assert outcome.error == "Connexion impossible dans le délai de 3 s."
    assert 2_900 <= outcome.duration_ms < 6_000
