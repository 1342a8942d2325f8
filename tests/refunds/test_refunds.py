"""Refunds (DESIGN: Refunds; spec: Errors `conflict`, Events refund.* and payment.refunded):
a refund of a succeeded Mobile Money payment, from the balance, paid by the operator. Without
`amount`, all that remains is refunded (partial refunds: test_partial_refunds)."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import events_of, merchant_available
from tests.payouts.builders import (
    FAILS_LATER,
    STAYS_PENDING,
    SUCCEEDS_LATER,
    create,
    ledger_postings_for,
    live_operator,
)
from tests.refunds.builders import PAYMENTS, REFUNDS, ask_refund, paid_payment
from tests.support import MerchantKeys, assert_error, card_body, make_merchant, momo_body, scalar


async def _payment_status(client: httpx.AsyncClient, merchant: MerchantKeys, ref: str) -> str:
    status: str = (await client.get(f"{PAYMENTS}/{ref}", headers=merchant.headers())).json()[
        "data"
    ]["status"]
    return status


async def test_refund_of_a_succeeded_payment(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=1500)
    assert await merchant_available(runtime, merchant.id) == 1500
    response = await ask_refund(client, merchant, payment["reference"], reason="Article retourné")
    assert response.status_code == 201, response.text
    refund = response.json()["data"]
    assert refund["reference"].startswith("re_")
    assert {k: refund[k] for k in ("payment", "status", "amount", "currency", "reason")} == {
        "payment": payment["reference"],
        "status": "succeeded",
        "amount": 1500,
        "currency": "XOF",
        "reason": "Article retourné",
    }
    assert refund["livemode"] is False
    assert refund["completed_at"] is not None
    assert await merchant_available(runtime, merchant.id) == 0
    assert await _payment_status(client, merchant, payment["reference"]) == "refunded"
    fetched = await client.get(f"{REFUNDS}/{refund['reference']}", headers=merchant.headers())
    assert fetched.json()["data"] == refund
    assert await events_of(runtime, refund["reference"]) == [("refund.succeeded", refund)]
    kinds = [kind for kind, _ in await events_of(runtime, payment["reference"])]
    assert sorted(kinds) == ["payment.refunded", "payment.succeeded"]


async def test_body_is_optional(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant)
    response = await client.post(
        f"{PAYMENTS}/{payment['reference']}/refund", headers=merchant.headers()
    )
    assert response.status_code == 201, response.text
    assert response.json()["data"]["reason"] is None


async def test_refusals(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    card = (await client.post(PAYMENTS, json=card_body(), headers=merchant.headers())).json()
    assert_error(
        await ask_refund(client, merchant, card["data"]["reference"]), 422, "invalid_request"
    )
    pending = await paid_payment(client, merchant, phone_number=STAYS_PENDING)
    assert_error(await ask_refund(client, merchant, pending["reference"]), 409, "conflict")
    refused = await client.post(
        PAYMENTS,
        json=momo_body(phone_number="22997000001", external_id="refused"),
        headers=merchant.headers(),
    )
    failed = (await client.get(f"{PAYMENTS}/refused", headers=merchant.headers())).json()["data"]
    assert refused.status_code == 402 and failed["status"] == "failed"
    assert_error(await ask_refund(client, merchant, failed["reference"]), 409, "conflict")
    paid = await paid_payment(client, merchant)
    assert (await ask_refund(client, merchant, paid["reference"])).status_code == 201
    assert_error(await ask_refund(client, merchant, paid["reference"]), 409, "conflict")
    assert_error(await ask_refund(client, merchant, "no-such-payment"), 404, "not_found")
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 1


async def test_instalment_of_a_plan_is_refunded_only_by_its_plan(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    plan = await client.post(
        "/api/v1/installment-plans", json={"target_amount": 5000}, headers=merchant.headers()
    )
    assert plan.status_code == 201, plan.text
    instalment = await client.post(
        f"/api/v1/installment-plans/{plan.json()['data']['reference']}/payments",
        json=momo_body(amount=2000),
        headers=merchant.headers(),
    )
    assert instalment.json()["data"]["status"] == "succeeded", instalment.text
    response = await ask_refund(client, merchant, instalment.json()["data"]["reference"])
    assert_error(response, 409, "conflict")


async def test_insufficient_funds_takes_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=2000)
    assert (await create(client, merchant.headers(), amount=1500)).status_code == 201
    assert_error(
        await ask_refund(client, merchant, payment["reference"]), 402, "insufficient_funds"
    )
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 0
    assert await merchant_available(runtime, merchant.id) == 500
    assert await _payment_status(client, merchant, payment["reference"]) == "succeeded"


async def test_delayed_success(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, phone_number=SUCCEEDS_LATER)
    clock.advance(runtime.settings.test_settle_delay)
    await worker.drain()
    assert await _payment_status(client, merchant, payment["reference"]) == "succeeded"
    refund = (await ask_refund(client, merchant, payment["reference"])).json()["data"]
    assert refund["status"] == "pending"
    assert await merchant_available(runtime, merchant.id) == 0
    clock.advance(runtime.settings.test_settle_delay)
    await worker.drain()
    done = (await client.get(f"{REFUNDS}/{refund['reference']}", headers=merchant.headers())).json()
    assert done["data"]["status"] == "succeeded"
    assert await _payment_status(client, merchant, payment["reference"]) == "refunded"


async def test_failure_later_re_credits_and_allows_a_new_refund(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, phone_number=FAILS_LATER)
    decided = await client.post(
        f"/api/v1/test-helpers/payments/{payment['reference']}/succeed", headers=merchant.headers()
    )
    assert decided.json()["data"]["status"] == "succeeded"
    refund = (await ask_refund(client, merchant, payment["reference"])).json()["data"]
    assert refund["status"] == "pending"
    assert_error(await ask_refund(client, merchant, payment["reference"]), 409, "conflict")
    clock.advance(runtime.settings.test_settle_delay)
    await worker.drain()
    failed = (
        await client.get(f"{REFUNDS}/{refund['reference']}", headers=merchant.headers())
    ).json()
    assert failed["data"]["status"] == "failed"
    assert await merchant_available(runtime, merchant.id) == 1000
    assert await _payment_status(client, merchant, payment["reference"]) == "succeeded"
    assert await events_of(runtime, refund["reference"]) == [("refund.failed", failed["data"])]
    again = await ask_refund(client, merchant, payment["reference"])
    assert again.status_code == 201
    assert again.json()["data"]["reference"] != refund["reference"]


async def test_live_refusal_at_initiation_takes_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    fake = live_operator(runtime, refuse_disbursements=True)
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, live=True)
    response = await ask_refund(client, merchant, payment["reference"], live=True)
    refused = assert_error(response, 402, "refund_failed")
    [sent] = fake.disbursed
    assert (sent.amount, sent.phone_number) == (1000, "22997000000")
    reference = await scalar(runtime, "SELECT reference FROM refunds WHERE status = 'failed'")
    assert refused["reference"] == reference  # the live path's refusal names it too
    assert await ledger_postings_for(runtime, reference) == 0
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert [kind for kind, _ in await events_of(runtime, reference)] == ["refund.failed"]
    # With no adapter left for the operator, the refund cannot be sent either.
    runtime.operators.live_adapters.clear()
    response = await ask_refund(client, merchant, payment["reference"], live=True)
    assert_error(response, 402, "refund_failed")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000


async def test_test_mode_refund_to_a_0001_number_is_refused_at_initiation(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """The simulator's table applies to refunds (DESIGN, Test mode). A 0001 number is refused
    when it pays, so the payment is made with another number, then its number is changed."""
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=1500)
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text("UPDATE payments SET phone_number = '22997000001' WHERE CAST(id AS text) = :id"),
            {"id": payment["reference"]},
        )
    response = await ask_refund(client, merchant, payment["reference"])
    refused = assert_error(response, 402, "refund_failed")
    reference = await scalar(runtime, "SELECT reference FROM refunds WHERE status = 'failed'")
    assert refused["reference"] == reference
    assert await ledger_postings_for(runtime, reference) == 0
    assert await merchant_available(runtime, merchant.id) == 1500
    assert await _payment_status(client, merchant, payment["reference"]) == "succeeded"
    assert [kind for kind, _ in await events_of(runtime, reference)] == ["refund.failed"]


async def test_refunds_are_private_to_their_merchant_and_environment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    payment = await paid_payment(client, merchant)
    assert_error(await ask_refund(client, other, payment["reference"]), 404, "not_found")
    assert_error(
        await ask_refund(client, merchant, payment["reference"], live=True), 404, "not_found"
    )
    refund = (await ask_refund(client, merchant, payment["reference"])).json()["data"]
    for headers in (other.headers(), merchant.headers(livemode=True)):
        response = await client.get(f"{REFUNDS}/{refund['reference']}", headers=headers)
        assert_error(response, 404, "not_found")


async def test_simultaneous_refunds_of_one_payment_make_one(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=1000)
    await paid_payment(client, merchant, amount=5000)
    responses = await asyncio.gather(
        *(ask_refund(client, merchant, payment["reference"]) for _ in range(30))
    )
    assert Counter(r.status_code for r in responses) == {201: 1, 409: 29}
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 1
    assert await merchant_available(runtime, merchant.id) == 5000


async def test_a_refund_retried_under_its_external_id_is_the_first_one(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Issue 23 (1): a refund retried after a timeout was a second refund. Under the same
    external_id it is the first one (200), even once the payment is wholly refunded."""
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=3000)
    first = await ask_refund(client, merchant, payment["reference"], amount=1000, external_id="r-1")
    assert first.status_code == 201, first.text
    assert first.json()["data"]["external_id"] == "r-1"
    again = await ask_refund(client, merchant, payment["reference"], amount=1000, external_id="r-1")
    assert again.status_code == 200, again.text
    assert again.json()["data"] == first.json()["data"]
    assert await merchant_available(runtime, merchant.id) == 2000
    rest = await ask_refund(client, merchant, payment["reference"], external_id="r-2")
    assert rest.status_code == 201, rest.text
    replayed = await ask_refund(client, merchant, payment["reference"], external_id="r-2")
    assert replayed.status_code == 200 and replayed.json()["data"] == rest.json()["data"]
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 2
    assert await merchant_available(runtime, merchant.id) == 0


async def test_simultaneous_retries_under_one_external_id_make_one_refund(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=5000)
    responses = await asyncio.gather(
        *(
            ask_refund(client, merchant, payment["reference"], amount=100, external_id="once")
            for _ in range(20)
        )
    )
    assert Counter(r.status_code for r in responses) == {201: 1, 200: 19}
    assert len({r.json()["data"]["reference"] for r in responses}) == 1
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 1
    assert await merchant_available(runtime, merchant.id) == 4900


async def test_an_external_id_names_one_refund_per_account_and_environment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Reused for another payment: 409, nothing written. Another account, or live mode,
    may use the same external_id."""
    merchant = await make_merchant(runtime)
    first = await paid_payment(client, merchant, amount=1000)
    second = await paid_payment(client, merchant, amount=1000)
    assert (
        await ask_refund(client, merchant, first["reference"], external_id="x")
    ).status_code == (201)
    reused = await ask_refund(client, merchant, second["reference"], external_id="x")
    assert_error(reused, 409, "conflict")
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 1
    other = await make_merchant(runtime)
    theirs = await paid_payment(client, other, amount=1000)
    assert (
        await ask_refund(client, other, theirs["reference"], external_id="x")
    ).status_code == 201
