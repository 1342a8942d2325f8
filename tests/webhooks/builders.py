"""Builders for the webhook tests: endpoint configuration, the delivery log, schedules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy import text

from cauri.app import create_app
from cauri.jobs import handlers
from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.support import MerchantKeys, make_merchant, momo_body, scalar
from tests.webhooks.receiver import Receiver

ENDPOINT = "/api/v1/webhooks/endpoint"
DELIVERIES = "/api/v1/webhooks/deliveries"
TEST = "/api/v1/webhooks/test"
EVENTS = "/api/v1/events"
PAYMENTS = "/api/v1/payments"


async def set_endpoint(
    client: httpx.AsyncClient,
    merchant: MerchantKeys,
    url: str | None,
    *,
    livemode: bool = False,
    rotate: bool = False,
) -> dict[str, Any]:
    body: dict[str, Any] = {"url": url}
    if rotate:
        body["rotate_secret"] = True
    response = await client.put(ENDPOINT, json=body, headers=merchant.headers(livemode))
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def pay(
    client: httpx.AsyncClient, merchant: MerchantKeys, *, livemode: bool = False, **overrides: Any
) -> dict[str, Any]:
    """A Mobile Money payment that succeeds at once (number ending 0000): one event."""
    response = await client.post(
        PAYMENTS, json=momo_body(**overrides), headers=merchant.headers(livemode)
    )
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


@dataclass(frozen=True)
class FailedDelivery:
    merchant: MerchantKeys
    endpoint: str  # where nobody listens
    delivery_id: str
    payment: str  # the paid payment's reference, in the event


async def failed_delivery(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> FailedDelivery:
    """A merchant's only webhook delivery, whose first attempt failed: nobody listened at
    its endpoint."""
    merchant = await make_merchant(runtime, name="Boutique Awa")
    with Receiver() as gone:
        endpoint = gone.url
    await set_endpoint(client, merchant, endpoint)
    paid = await pay(client, merchant)
    await worker.drain()
    delivery = await scalar(runtime, "SELECT id FROM webhook_deliveries LIMIT 1")
    assert await scalar(runtime, "SELECT count(*) FROM webhook_attempts") == 1
    return FailedDelivery(merchant, endpoint, str(delivery), paid["reference"])


async def send_test(
    client: httpx.AsyncClient, merchant: MerchantKeys, *, livemode: bool = False
) -> dict[str, Any]:
    response = await client.post(TEST, headers=merchant.headers(livemode))
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def deliveries(
    client: httpx.AsyncClient, merchant: MerchantKeys, *, livemode: bool = False
) -> list[dict[str, Any]]:
    response = await client.get(DELIVERIES, headers=merchant.headers(livemode))
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


async def attempts(runtime: Runtime, delivery_id: str) -> list[dict[str, Any]]:
    async with runtime.sessionmaker() as session:
        rows = await session.execute(
            text(
                "SELECT number, started_at, duration_ms, response_code, error "
                "FROM webhook_attempts WHERE delivery_id = :id ORDER BY number"
            ),
            {"id": delivery_id},
        )
        return [dict(row._mapping) for row in rows]


def api_client(runtime: Runtime) -> httpx.AsyncClient:
    """A client on an app of its own (e.g. with other settings); use as `async with`."""
    transport = httpx.ASGITransport(app=create_app(runtime), raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


def worker_for(runtime: Runtime) -> Worker:
    return Worker(runtime, handlers())


async def run_schedule(worker: Worker, clock: ManualClock, runtime: Runtime) -> None:
    """Every attempt of the retry schedule: the first now, then one per delay."""
    await worker.drain()
    for delay in runtime.settings.retry_delays:
        clock.advance(delay)
        await worker.drain()
