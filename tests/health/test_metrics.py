"""GET /metrics (issue 12, operability): Prometheus' text format, to the holder of
CAURI_METRICS_TOKEN only; HTTP requests by route template counted in process, the business
figures (payments, payouts, deliveries, exchanges, the job queue) read from the database at
each scrape, whichever process did the work."""

from __future__ import annotations

import dataclasses

import httpx
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.kit.db import make_engine, make_sessionmaker, unit_of_work
from cauri.runtime import Runtime
from tests.foundation.builders import API, app_with, client_of
from tests.payouts.builders import PAYOUTS, REFUSED, payout_body, top_up
from tests.support import assert_error, make_merchant, momo_body
from tests.webhooks.builders import set_endpoint

TOKEN = "scrape-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def samples(page: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
    }


def value(page: str, name: str, **labels: str) -> float | None:
    return samples(page).get((name, frozenset(labels.items())))


def requests(page: str, method: str, route: str, status: int) -> float | None:
    return value(page, "cauri_http_requests_total", method=method, route=route, status=str(status))


def metrics_client(runtime: Runtime, **settings: object) -> httpx.AsyncClient:
    return client_of(app_with(runtime, metrics_token=TOKEN, **settings))


async def test_not_served_unless_a_token_is_configured(client: httpx.AsyncClient) -> None:
    response = await client.get("/metrics", headers=AUTH)
    unknown = await client.get("/nothing-here")
    assert_error(response, 404, "not_found")
    assert response.json() == unknown.json()


async def test_the_token_is_required(runtime: Runtime) -> None:
    async with metrics_client(runtime) as client:
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": f"Basic {TOKEN}"},
            {"Authorization": f"Bearer {TOKEN}x"},
            {"Authorization": TOKEN},
        ):
            response = await client.get("/metrics", headers=headers)
            assert_error(response, 401, "unauthorized")
            assert response.headers["www-authenticate"] == "Bearer"
            assert TOKEN not in response.text
        response = await client.get("/metrics", headers=AUTH)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    assert value(response.text, "cauri_database_up") == 1


async def test_outside_the_api_document_and_the_rate_limit(runtime: Runtime) -> None:
    async with metrics_client(runtime, rate_limit="2/minute") as client:
        for _ in range(5):
            response = await client.get("/metrics", headers=AUTH)
            assert response.status_code == 200
            assert "x-ratelimit-limit" not in response.headers
        document = (await client.get(f"{API}/openapi.json")).json()
    assert "/metrics" not in document["paths"]


async def test_requests_by_route_template_never_by_path(runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    async with metrics_client(runtime) as client:
        created = await client.post(f"{API}/payments", json=momo_body(), headers=merchant.headers())
        reference = created.json()["data"]["reference"]
        for _ in range(3):
            await client.get(f"{API}/payments/{reference}", headers=merchant.headers())
        await client.get(f"{API}/payments/pay_unknown", headers=merchant.headers())
        await client.get(f"{API}/nothing/{reference}")
        page = (await client.get("/metrics", headers=AUTH)).text
    route = f"{API}/payments/{{reference}}"
    assert value(page, "cauri_http_requests_total", method="GET", route=route, status="200") == 3
    assert value(page, "cauri_http_requests_total", method="GET", route=route, status="404") == 1
    assert (
        value(
            page, "cauri_http_requests_total", method="POST", route=f"{API}/payments", status="201"
        )
        == 1
    )
    assert (
        value(page, "cauri_http_requests_total", method="GET", route="unmatched", status="404") == 1
    )
    assert value(page, "cauri_http_request_duration_seconds_count", method="GET", route=route) == 4
    assert (
        value(
            page, "cauri_http_request_duration_seconds_bucket", method="GET", route=route, le="+Inf"
        )
        == 4
    )
    assert reference not in page and "pay_unknown" not in page


async def test_business_figures_are_read_from_the_database(
    runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    async with metrics_client(runtime) as client:
        await set_endpoint(client, merchant, "http://127.0.0.1:9/hooks")
        pay = f"{API}/payments"
        assert (await client.post(pay, json=momo_body(), headers=merchant.headers())).is_success
        refused = momo_body(phone_number="22997260001")
        assert (await client.post(pay, json=refused, headers=merchant.headers())).status_code == 402
        assert (
            await client.post(PAYOUTS, json=payout_body(), headers=merchant.headers())
        ).is_success
        refused_payout = payout_body(phone_number=REFUSED)
        await client.post(PAYOUTS, json=refused_payout, headers=merchant.headers())
        async with unit_of_work(runtime.sessionmaker) as session:
            for action, status in [("collect", 200), ("collect", 200), ("collect", 400),
                                   ("collect", 429), ("collect", 503), ("collect", None),
                                   ("callback", None)]:  # fmt: skip
                await session.execute(
                    text(
                        "INSERT INTO operator_exchanges (connector, action, method, url, "
                        "response_status, duration_ms, created_at) "
                        "VALUES ('mtn-main', :action, 'POST', 'https://op.test', :status, 5, now())"
                    ),
                    {"action": action, "status": status},
                )
        clock.advance(30)
        page = (await client.get("/metrics", headers=AUTH)).text

    assert value(page, "cauri_payments", operator="mtn", status="succeeded", mode="test") == 1
    assert value(page, "cauri_payments", operator="mtn", status="failed", mode="test") == 1
    assert value(page, "cauri_payouts", operator="mtn", status="succeeded", mode="test") == 1
    assert value(page, "cauri_payouts", operator="mtn", status="failed", mode="test") == 1
    assert value(page, "cauri_payments", operator="mtn", status="pending", mode="test") is None
    # The events of the payments and payouts wait for the worker, 30 s late by the clock.
    pending = value(page, "cauri_webhook_deliveries", status="pending", mode="test")
    assert pending is not None and pending >= 2
    assert value(page, "cauri_jobs", lane="webhooks-test", state="due") == pending
    assert value(page, "cauri_jobs_oldest_due_seconds", lane="webhooks-test") == 30
    for lane in ("money-live", "money-test", "webhooks-live"):
        assert value(page, "cauri_jobs", lane=lane, state="due") == 0
        assert value(page, "cauri_jobs_oldest_due_seconds", lane=lane) == 0
    exchanges = {
        result: value(page, "cauri_operator_exchanges_total", connector="mtn-main", result=result)
        for result in (
            "answered",
            "refused",
            "throttled",
            "server_error",
            "no_response",
            "received",
        )
    }
    assert exchanges == {
        "answered": 2,
        "refused": 1,
        "throttled": 1,
        "server_error": 1,
        "no_response": 1,
        "received": 1,
    }


async def test_a_database_that_does_not_answer_leaves_the_http_figures(
    runtime: Runtime,
) -> None:
    engine = make_engine("postgresql+asyncpg://nobody:x@127.0.0.1:1/none")
    away = dataclasses.replace(runtime, engine=engine, sessionmaker=make_sessionmaker(engine))
    try:
        async with metrics_client(away) as client:
            await client.get("/health")
            response = await client.get("/metrics", headers=AUTH)
    finally:
        await engine.dispose()
    assert response.status_code == 200
    assert value(response.text, "cauri_database_up") == 0
    assert value(response.text, "cauri_payments", operator="mtn", status="succeeded") is None
    assert (
        value(
            response.text, "cauri_http_requests_total", method="GET", route="/health", status="200"
        )
        == 1
    )
