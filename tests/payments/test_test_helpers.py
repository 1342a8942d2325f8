"""POST /test-helpers/payments/{reference}/succeed|fail (DESIGN: Test helpers): test keys
only, a pending payment only, returns the updated payment."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.operators.protocol import Outcome
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import (
    PAYMENTS,
    FakeLiveOperator,
    events_of,
    merchant_available,
    pay,
    platform_fees,
    set_platform_fees,
)
from tests.support import MerchantKeys, assert_error, card_body, make_merchant, momo_body

HELPERS = "/api/v1/test-helpers/payments"


async def pending_payment(
    client: httpx.AsyncClient, merchant: MerchantKeys, body: dict[str, Any]
) -> dict[str, Any]:
    response = await pay(client, merchant.headers(), body)
    assert response.status_code == 201, response.text
    payment: dict[str, Any] = response.json()["data"]
    assert payment["status"] == "pending"
    return payment


PENDING_BODIES = {
    "card": card_body(external_id="c-1"),
    "mobile_money_0002": momo_body(phone_number="22997000002", external_id="m-1"),
}


@pytest.mark.parametrize("kind", sorted(PENDING_BODIES))
async def test_succeed_a_pending_payment(
    client: httpx.AsyncClient, runtime: Runtime, kind: str
) -> None:
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="2")
    payment = await pending_payment(client, merchant, PENDING_BODIES[kind])
    response = await client.post(
        f"{HELPERS}/{payment['reference']}/succeed", headers=merchant.headers()
    )
    assert response.status_code == 200, response.text
    updated = response.json()["data"]
    assert updated["reference"] == payment["reference"]
    assert updated["status"] == "succeeded"
    assert await merchant_available(runtime, merchant.id) == payment["amount"]
    assert await platform_fees(runtime) == payment["fee_amount"]
    assert [kind for kind, _ in await events_of(runtime, payment["reference"])] == [
        "payment.succeeded"
    ]
    fetched = await client.get(f"{PAYMENTS}/{payment['reference']}", headers=merchant.headers())
    assert fetched.json()["data"] == updated


@pytest.mark.parametrize("kind", sorted(PENDING_BODIES))
async def test_fail_a_pending_payment(
    client: httpx.AsyncClient, runtime: Runtime, kind: str
) -> None:
    merchant = await make_merchant(runtime)
    payment = await pending_payment(client, merchant, PENDING_BODIES[kind])
    # The helpers accept the external_id as well as the reference.
    external_id = PENDING_BODIES[kind]["external_id"]
    response = await client.post(f"{HELPERS}/{external_id}/fail", headers=merchant.headers())
    assert response.status_code == 200, response.text
    assert response.json()["data"]["status"] == "failed"
    assert await merchant_available(runtime, merchant.id) == 0
    assert [kind for kind, _ in await events_of(runtime, payment["reference"])] == [
        "payment.failed"
    ]


@pytest.mark.parametrize(
    ("number", "outcome"),
    [("22997000000", "fail"), ("22997000000", "succeed")],
)
async def test_settled_payment_is_409(
    client: httpx.AsyncClient, runtime: Runtime, number: str, outcome: str
) -> None:
    merchant = await make_merchant(runtime)
    payment = (await pay(client, merchant.headers(), momo_body(phone_number=number))).json()["data"]
    response = await client.post(
        f"{HELPERS}/{payment['reference']}/{outcome}", headers=merchant.headers()
    )
    assert_error(response, 409, "conflict")
    assert await merchant_available(runtime, merchant.id) == 1000
    assert len(await events_of(runtime, payment["reference"])) == 1


async def test_failed_payment_is_409(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await pay(client, merchant.headers(), momo_body(phone_number="22997000001", external_id="f"))
    response = await client.post(f"{HELPERS}/f/succeed", headers=merchant.headers())
    assert_error(response, 409, "conflict")
    assert await merchant_available(runtime, merchant.id) == 0


async def test_second_decision_is_409(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    payment = await pending_payment(client, merchant, card_body())
    url = f"{HELPERS}/{payment['reference']}"
    assert (await client.post(f"{url}/fail", headers=merchant.headers())).status_code == 200
    assert_error(await client.post(f"{url}/succeed", headers=merchant.headers()), 409, "conflict")
    assert await merchant_available(runtime, merchant.id) == 0


async def test_concurrent_decisions_settle_once(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await pending_payment(client, merchant, card_body(amount=700))
    url = f"{HELPERS}/{payment['reference']}"
    responses = await asyncio.gather(
        *(
            client.post(f"{url}/{'succeed' if i % 2 else 'fail'}", headers=merchant.headers())
            for i in range(20)
        )
    )
    assert sorted(r.status_code for r in responses) == [200] + [409] * 19
    winner = next(r for r in responses if r.status_code == 200).json()["data"]["status"]
    events = await events_of(runtime, payment["reference"])
    assert [kind for kind, _ in events] == [f"payment.{winner}"]
    assert await merchant_available(runtime, merchant.id) == (700 if winner == "succeeded" else 0)


async def test_live_key_gets_404(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    runtime.operators.live_adapters["visa"] = FakeLiveOperator(outcome=Outcome.PENDING)
    live = (await pay(client, merchant.headers(livemode=True), card_body())).json()["data"]
    assert live["status"] == "pending"
    response = await client.post(
        f"{HELPERS}/{live['reference']}/succeed", headers=merchant.headers(livemode=True)
    )
    assert_error(response, 404, "not_found")
    # And a test key cannot reach the live payment either.
    response = await client.post(
        f"{HELPERS}/{live['reference']}/succeed", headers=merchant.headers()
    )
    assert_error(response, 404, "not_found")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0


async def test_another_merchant_payment_is_404(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    payment = await pending_payment(client, merchant, card_body())
    response = await client.post(
        f"{HELPERS}/{payment['reference']}/succeed", headers=other.headers()
    )
    assert_error(response, 404, "not_found")
    fetched = await client.get(f"{PAYMENTS}/{payment['reference']}", headers=merchant.headers())
    assert fetched.json()["data"]["status"] == "pending"


async def test_unknown_payment_and_unknown_outcome(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    assert_error(
        await client.post(f"{HELPERS}/nope/succeed", headers=merchant.headers()), 404, "not_found"
    )
    payment = await pending_payment(client, merchant, card_body())
    response = await client.post(
        f"{HELPERS}/{payment['reference']}/refund", headers=merchant.headers()
    )
    assert_error(response, 404, "not_found")


async def test_helpers_require_a_key(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    payment = await pending_payment(client, merchant, card_body())
    assert_error(
        await client.post(f"{HELPERS}/{payment['reference']}/succeed"), 401, "unauthorized"
    )


@pytest.mark.parametrize(
    ("number", "outcome"), [("22997123456", "fail"), ("22997000003", "succeed")]
)
async def test_decision_before_the_delayed_outcome_wins(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    number: str,
    outcome: str,
) -> None:
    """The simulator's delayed answer finds the payment already settled and changes nothing."""
    merchant = await make_merchant(runtime)
    payment = await pending_payment(client, merchant, momo_body(phone_number=number))
    url = f"{HELPERS}/{payment['reference']}/{outcome}"
    decided = (await client.post(url, headers=merchant.headers())).json()["data"]["status"]
    clock.advance(3600)
    await worker.drain()
    fetched = await client.get(f"{PAYMENTS}/{payment['reference']}", headers=merchant.headers())
    assert fetched.json()["data"]["status"] == decided
    assert len(await events_of(runtime, payment["reference"])) == 1
    credited = payment["amount"] if decided == "succeeded" else 0
    assert await merchant_available(runtime, merchant.id) == credited
