"""POST /operator-callbacks/{operator}: a live operator's notification, read through the
adapter protocol's callback parsing (issue 2: adapter protocol), prompts the status query
that settles a pending live collection (issue 23: a notification is only a hint)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from cauri.operators.protocol import Outcome
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import (
    CALLBACK_SECRET,
    PAYMENTS,
    FakeLiveOperator,
    events_of,
    merchant_available,
    pay,
    platform_fees,
    set_platform_fees,
)
from tests.support import MerchantKeys, assert_error, make_merchant, momo_body

CALLBACKS = "/api/v1/operator-callbacks"


async def notify(
    client: httpx.AsyncClient,
    operator: str,
    reference: str,
    status: str,
    secret: str = CALLBACK_SECRET,
) -> httpx.Response:
    return await client.post(
        f"{CALLBACKS}/{operator}",
        content=json.dumps({"reference": reference, "status": status}),
        headers={"X-Operator-Secret": secret, "Content-Type": "application/json"},
    )


@pytest.fixture
async def live_pending(
    client: httpx.AsyncClient, runtime: Runtime
) -> tuple[MerchantKeys, dict[str, Any]]:
    """A live MTN payment the operator has not decided yet."""
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="2")
    runtime.operators.live_adapters["mtn"] = FakeLiveOperator(outcome=Outcome.PENDING)
    response = await pay(client, merchant.headers(livemode=True), momo_body(amount=1000))
    assert response.status_code == 201, response.text
    payment: dict[str, Any] = response.json()["data"]
    assert payment["status"] == "pending"
    return merchant, payment


async def live_status(client: httpx.AsyncClient, merchant: MerchantKeys, reference: str) -> str:
    response = await client.get(f"{PAYMENTS}/{reference}", headers=merchant.headers(livemode=True))
    status: str = response.json()["data"]["status"]
    return status


async def decided(runtime: Runtime, outcome: Outcome) -> None:
    """The operator has decided: its status queries now say so."""
    operator = runtime.operators.live_adapters["mtn"]
    assert isinstance(operator, FakeLiveOperator)
    operator.outcome = outcome


async def test_success_notification_settles_and_credits_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    live_pending: tuple[MerchantKeys, dict[str, Any]],
) -> None:
    merchant, payment = live_pending
    await decided(runtime, Outcome.SUCCEEDED)
    # Operator codes are case-insensitive here too; operators repeat their notifications.
    for operator in ("mtn", "MTN"):
        response = await notify(client, operator, payment["reference"], "succeeded")
        assert response.status_code == 200, response.text
        assert response.json() == {"success": True, "data": {"received": True}}
    # Authentic, but a hint all the same: the one status query it prompts settles.
    assert await live_status(client, merchant, payment["reference"]) == "pending"
    await worker.drain()
    assert await live_status(client, merchant, payment["reference"]) == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert await platform_fees(runtime, livemode=True) == 20
    assert [kind for kind, _ in await events_of(runtime, payment["reference"])] == [
        "payment.succeeded"
    ]
    # A contradicting late notification changes nothing either.
    assert (await notify(client, "mtn", payment["reference"], "failed")).status_code == 200
    assert await live_status(client, merchant, payment["reference"]) == "succeeded"


async def test_failure_notification(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    live_pending: tuple[MerchantKeys, dict[str, Any]],
) -> None:
    merchant, payment = live_pending
    await decided(runtime, Outcome.FAILED)
    assert (await notify(client, "mtn", payment["reference"], "failed")).status_code == 200
    await worker.drain()
    assert await live_status(client, merchant, payment["reference"]) == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    assert [kind for kind, _ in await events_of(runtime, payment["reference"])] == [
        "payment.failed"
    ]


async def test_unauthentic_notification_is_401_and_changes_nothing(
    client: httpx.AsyncClient, runtime: Runtime, live_pending: tuple[MerchantKeys, dict[str, Any]]
) -> None:
    merchant, payment = live_pending
    response = await notify(client, "mtn", payment["reference"], "succeeded", secret="guess")
    assert_error(response, 401, "unauthorized")
    assert await live_status(client, merchant, payment["reference"]) == "pending"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0


async def test_notification_must_match_a_live_payment_of_that_operator(
    client: httpx.AsyncClient, runtime: Runtime, live_pending: tuple[MerchantKeys, dict[str, Any]]
) -> None:
    merchant, payment = live_pending
    runtime.operators.live_adapters["moov"] = FakeLiveOperator()
    # Another operator cannot settle MTN's payment.
    response = await notify(client, "moov", payment["reference"], "succeeded")
    assert_error(response, 404, "not_found")
    # A test payment is never settled by an operator.
    test = (await pay(client, merchant.headers(), momo_body(phone_number="22997000002"))).json()
    response = await notify(client, "mtn", test["data"]["reference"], "succeeded")
    assert_error(response, 404, "not_found")
    for reference in ("not-a-uuid", "00000000-0000-0000-0000-000000000000"):
        assert_error(await notify(client, "mtn", reference, "succeeded"), 404, "not_found")
    assert await live_status(client, merchant, payment["reference"]) == "pending"


@pytest.mark.parametrize("operator", ["wave_sn", "airtel"])
async def test_operator_without_live_adapter_is_404(
    client: httpx.AsyncClient, runtime: Runtime, operator: str
) -> None:
    """Test mode has no operator to call back: the simulator accepts no notification."""
    assert_error(await notify(client, operator, "whatever", "succeeded"), 404, "not_found")
