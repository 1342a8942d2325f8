"""Test mode's outcomes by the last four digits (DESIGN: Test mode), delayed outcomes as jobs
run on the injectable clock, and the events each final state records."""

from __future__ import annotations

from typing import Any

import httpx

from cauri.kit.clock import ManualClock
from cauri.operators.simulator import Simulator
from cauri.payments.jobs import CHECK_STATUS
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import (
    PAYMENTS,
    count_rows,
    events_of,
    merchant_available,
    pay,
    platform_fees,
    set_platform_fees,
)
from tests.support import MerchantKeys, assert_error, make_merchant, momo_body, scalar

SETTLE_DELAY = 10  # CAURI_TEST_SETTLE_DELAY's default


async def status_checks(runtime: Runtime) -> int:
    """Delayed outcomes waiting in the job queue."""
    return int(
        await scalar(
            runtime, "SELECT count(*) FROM jobs WHERE kind = :kind", kind=CHECK_STATUS.name
        )
    )


async def fetch(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str
) -> dict[str, Any]:
    response = await client.get(f"{PAYMENTS}/{reference}", headers=merchant.headers())
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def assert_event_data(data: dict[str, Any], payment: dict[str, Any], status: str) -> None:
    """An event's `data` is the payment object as it was, with the mode's country."""
    assert data["reference"] == payment["reference"]
    assert data["status"] == status
    assert data["amount"] == payment["amount"]
    assert data["fee_amount"] == payment["fee_amount"]
    assert data["total_amount"] == payment["total_amount"]
    assert data["payment_mode"] == payment["payment_mode"] | {
        "country": "Bénin",
        "country_code": "BJ",
    }


async def test_0000_succeeds_at_once(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="1")
    response = await pay(client, merchant.headers(), momo_body(phone_number="22997000000"))
    assert response.status_code == 201
    payment = response.json()["data"]
    assert payment["status"] == "succeeded"
    assert await merchant_available(runtime, merchant.id) == 1000
    assert await platform_fees(runtime) == 10
    # Nothing left for the worker to decide.
    assert await status_checks(runtime) == 0
    events = await events_of(runtime, payment["reference"])
    assert [kind for kind, _ in events] == ["payment.succeeded"]
    assert_event_data(events[0][1], payment, "succeeded")


async def test_0001_is_refused_and_recorded_failed(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    response = await pay(
        client, merchant.headers(), momo_body(phone_number="22997000001", external_id="o-1")
    )
    assert_error(response, 402, "payment_failed")
    listed = (await client.get(PAYMENTS, headers=merchant.headers())).json()["data"]
    assert [p["status"] for p in listed] == ["failed"]
    payment = await fetch(client, merchant, "o-1")
    assert payment["status"] == "failed"
    # The refusal names what it recorded: found even without an external_id.
    assert response.json()["error"]["reference"] == payment["reference"]
    assert await fetch(client, merchant, payment["reference"]) == payment
    events = await events_of(runtime, payment["reference"])
    assert [kind for kind, _ in events] == ["payment.failed"]
    assert_event_data(events[0][1], payment, "failed")
    assert await merchant_available(runtime, merchant.id) == 0
    assert await count_rows(runtime, "ledger_postings") == 0


async def test_0002_stays_pending(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    payment = (await pay(client, merchant.headers(), momo_body(phone_number="22997000002"))).json()
    reference = payment["data"]["reference"]
    assert payment["data"]["status"] == "pending"
    assert await status_checks(runtime) == 0
    clock.advance(3600)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "pending"
    assert await events_of(runtime, reference) == []
    assert await merchant_available(runtime, merchant.id) == 0


async def test_0003_pending_then_failed(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    response = await pay(client, merchant.headers(), momo_body(phone_number="22997000003"))
    assert response.status_code == 201
    payment = response.json()["data"]
    assert payment["status"] == "pending"

    clock.advance(SETTLE_DELAY - 1)
    await worker.drain()
    assert (await fetch(client, merchant, payment["reference"]))["status"] == "pending"

    clock.advance(1)
    await worker.drain()
    settled = await fetch(client, merchant, payment["reference"])
    assert settled["status"] == "failed"
    events = await events_of(runtime, payment["reference"])
    assert [kind for kind, _ in events] == ["payment.failed"]
    assert_event_data(events[0][1], payment, "failed")
    assert await merchant_available(runtime, merchant.id) == 0
    # A second pass of the worker changes nothing.
    clock.advance(3600)
    await worker.drain()
    assert len(await events_of(runtime, payment["reference"])) == 1


async def test_other_digits_pending_then_succeeded_and_only_then_credited(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="2")
    response = await pay(client, merchant.headers(), momo_body(phone_number="22997123456"))
    payment = response.json()["data"]
    assert response.status_code == 201 and payment["status"] == "pending"
    assert await merchant_available(runtime, merchant.id) == 0

    clock.advance(SETTLE_DELAY - 1)
    await worker.drain()
    assert (await fetch(client, merchant, payment["reference"]))["status"] == "pending"
    assert await merchant_available(runtime, merchant.id) == 0
    assert await platform_fees(runtime) == 0

    clock.advance(1)
    await worker.drain()
    settled = await fetch(client, merchant, payment["reference"])
    assert settled["status"] == "succeeded"
    assert settled["updated_at"] > payment["updated_at"]
    assert await merchant_available(runtime, merchant.id) == 1000
    assert await platform_fees(runtime) == 20
    events = await events_of(runtime, payment["reference"])
    assert [kind for kind, _ in events] == ["payment.succeeded"]
    assert_event_data(events[0][1], payment, "succeeded")
    # Idempotent job: running again credits nothing more.
    clock.advance(3600)
    await worker.drain()
    assert await merchant_available(runtime, merchant.id) == 1000


async def test_only_the_last_four_digits_count(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    # 0001 inside the number, 0000 at its end: succeeded.
    response = await pay(client, merchant.headers(), momo_body(phone_number="2290001000000"))
    assert response.json()["data"]["status"] == "succeeded"
    # The + is not a digit.
    response = await pay(client, merchant.headers(), momo_body(phone_number="+22997000001"))
    assert_error(response, 402, "payment_failed")


async def test_outcome_rule_applies_to_every_country(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    body = momo_body(operator="mtn_cg", currency="XAF", phone_number="242060000001")
    assert_error(await pay(client, merchant.headers(), body), 402, "payment_failed")
    body = momo_body(operator="mtn_cg", currency="XAF", phone_number="242060000000")
    payment = (await pay(client, merchant.headers(), body)).json()["data"]
    assert payment["status"] == "succeeded"
    assert await merchant_available(runtime, merchant.id, currency="XAF") == 1000
    events = await events_of(runtime, payment["reference"])
    assert events[0][1]["payment_mode"]["country_code"] == "CG"
    assert events[0][1]["payment_mode"]["country"] == "Congo"


async def test_settle_delay_is_a_setting(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    """CAURI_TEST_SETTLE_DELAY feeds the simulator; 30 s here instead of the default 10."""
    runtime.operators.simulator = Simulator(settle_delay=30)
    merchant = await make_merchant(runtime)
    payment = (await pay(client, merchant.headers(), momo_body(phone_number="22997123456"))).json()
    reference = payment["data"]["reference"]
    clock.advance(29)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "pending"
    clock.advance(1)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "succeeded"
