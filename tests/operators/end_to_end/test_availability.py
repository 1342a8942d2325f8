"""Availability of payment modes (issue 11): each mode's `availability` in GET /payment-modes,
from what Cauri sees of its routes' recent exchanges (a circuit breaker) and what connectors
report (pawaPay); a closed route refuses new payments and payouts at once. Driven over real
HTTP against the operators' contract fakes, into failure and back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cauri.calls.availability import MIN_EXCHANGES, WINDOW
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.fakes.mtn_momo import MtnMomoFake
from tests.fakes.pawapay import PawapayFake
from tests.operators.live import connect, run, send_payout, status_of
from tests.operators.mtn_live import NUMBER, mtn_fake, wire
from tests.payments.builders import PAYMENT_MODES, merchant_available, pay
from tests.payouts.builders import top_up
from tests.support import MerchantKeys, assert_error, make_merchant, momo_body, scalar


@pytest.fixture
def fake() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        fake.callback_mode = "drop"
        yield fake


async def availability_of(
    client: httpx.AsyncClient, merchant: MerchantKeys, operator: str, *, livemode: bool = True
) -> dict[str, str]:
    response = await client.get(PAYMENT_MODES, headers=merchant.headers(livemode=livemode))
    assert response.status_code == 200, response.text
    [mode] = [m for m in response.json()["data"] if m["operator"].lower() == operator.lower()]
    found: dict[str, str] = mode["availability"]
    return found


async def live_pay(client: httpx.AsyncClient, merchant: MerchantKeys) -> httpx.Response:
    return await pay(client, merchant.headers(livemode=True), momo_body(phone_number=NUMBER))


async def test_a_failing_route_closes_refuses_at_once_and_reopens(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, fake: MtnMomoFake
) -> None:
    await wire(runtime, fake)
    merchant = await make_merchant(runtime)
    up = {"collection": "operational", "payout": "operational"}
    assert await availability_of(client, merchant, "MTN") == up
    assert await availability_of(client, merchant, "MTN", livemode=False) == up
    # MTN fails every request (500, before accepting anything): each payment waits.
    fake.fault("error_500", times=MIN_EXCHANGES, path="requesttopay")
    waiting = []
    for _ in range(MIN_EXCHANGES):
        response = await live_pay(client, merchant)
        assert response.status_code == 201, response.text
        waiting.append(response.json()["data"]["reference"])
    assert await availability_of(client, merchant, "MTN") == {
        "collection": "closed",
        "payout": "operational",
    }
    # Closed: the next payment is refused at once, MTN is not asked.
    refused = await live_pay(client, merchant)
    assert "ne répond plus" in assert_error(refused, 402, "payment_failed")["message"]
    assert len(fake.posts("collect")) == MIN_EXCHANGES
    failed = await scalar(
        runtime, "SELECT array_agg(failure_reason) FROM payments WHERE status = 'failed'"
    )
    assert failed == ["operator_unavailable"]
    # MTN is back: the status queries find nothing, send again, MTN accepts and pays.
    await run(runtime, worker, 30)
    await run(runtime, worker, 120)
    for reference in waiting:
        assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    assert (await availability_of(client, merchant, "MTN"))["collection"] != "closed"
    assert (await live_pay(client, merchant)).status_code == 201
    # The failures age out of the window.
    runtime.clock.advance(WINDOW.total_seconds())  # type: ignore[attr-defined]
    assert await availability_of(client, merchant, "MTN") == up


async def test_a_closed_route_refuses_a_payout_with_nothing_taken(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, fake: MtnMomoFake
) -> None:
    await wire(runtime, fake)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000, livemode=True)
    fake.fault("error_500", times=MIN_EXCHANGES, path="transfer")
    body: dict[str, Any] = {"amount": 1000, "phone_number": NUMBER, "operator": "mtn"}
    for _ in range(MIN_EXCHANGES):
        assert (await send_payout(client, merchant, body))["status"] == "pending"
    assert (await availability_of(client, merchant, "MTN"))["payout"] == "closed"
    response = await client.post(
        "/api/v1/payouts", json=body, headers=merchant.headers(livemode=True)
    )
    assert_error(response, 402, "payout_failed")
    assert len(fake.posts("transfer")) == MIN_EXCHANGES
    refused = await scalar(
        runtime, "SELECT array_agg(failure_reason) FROM payouts WHERE status = 'failed'"
    )
    assert refused == ["operator_unavailable"]
    assert await merchant_available(runtime, merchant.id, livemode=True) == 10_000 - 5 * 1000


@pytest.fixture
def pawapay() -> Iterator[PawapayFake]:
    with PawapayFake(api_token="token") as fake:
        fake.callback_mode = "drop"
        yield fake


async def test_what_pawapay_reports_closes_and_degrades_modes(
    client: httpx.AsyncClient, runtime: Runtime, pawapay: PawapayFake
) -> None:
    await connect(
        runtime,
        name="pawapay",
        kind="pawapay",
        base_url=pawapay.base_url,
        settings={},
        secrets={"api_token": "token"},
        operators=["moov", "orange_ci"],
    )
    merchant = await make_merchant(runtime)
    pawapay.provider_status("MOOV_BEN", "DEPOSIT", "CLOSED")
    pawapay.provider_status("ORANGE_CIV", "PAYOUT", "DELAYED")
    assert await availability_of(client, merchant, "MOOV") == {
        "collection": "closed",
        "payout": "operational",
    }
    assert await availability_of(client, merchant, "ORANGE_CI") == {
        "collection": "operational",
        "payout": "degraded",
    }
    response = await pay(
        client,
        merchant.headers(livemode=True),
        momo_body(operator="moov", phone_number="22995123456"),
    )
    assert_error(response, 402, "payment_failed")
    assert pawapay.posts("deposit") == []
    # A mode with no payout route says so.
    await connect(
        runtime,
        name="pawapay-collect",
        kind="pawapay",
        base_url=pawapay.base_url,
        settings={},
        secrets={"api_token": "token"},
        operators=[],
    )
    async with runtime.sessionmaker() as session:
        from cauri.connectors.service import connectors

        await connectors.set_routes(
            session, "free_sn", {"collect": "pawapay-collect"}, runtime.clock.now()
        )
        await session.commit()
    assert await availability_of(client, merchant, "FREE_SN") == {
        "collection": "operational",
        "payout": "closed",
    }
