"""Partial refunds (DESIGN: Refunds; spec: Errors `conflict`, `invalid_request`): a payment
takes several refunds until nothing remains; what remains is `amount` less the refunds
pending or succeeded; the payment carries `amount_refunded` and becomes `refunded` only when
all of it is refunded."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine

from cauri.kit.clock import ManualClock
from cauri.kit.failures import MESSAGES
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.ledger_checks import assert_ledger_reconciles
from tests.payments.builders import events_of, merchant_available
from tests.payouts.builders import FAILS_LATER, SUCCEEDS_LATER, create
from tests.refunds.builders import ask_refund, paid_payment, payment_of, refund_of
from tests.support import assert_error, make_merchant, scalar


async def test_a_part_then_the_rest(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=1500)
    assert payment["amount_refunded"] == 0
    reference = payment["reference"]

    first = await ask_refund(client, merchant, reference, amount=500, reason="Un article")
    assert first.status_code == 201, first.text
    part = first.json()["data"]
    assert (part["amount"], part["status"], part["reason"]) == (500, "succeeded", "Un article")
    after_part = await payment_of(client, merchant, reference)
    assert (after_part["status"], after_part["amount_refunded"]) == ("succeeded", 500)
    assert await merchant_available(runtime, merchant.id) == 1000
    # A partial refund emits its own event, not payment.refunded.
    assert await events_of(runtime, part["reference"]) == [("refund.succeeded", part)]
    assert [kind for kind, _ in await events_of(runtime, reference)] == ["payment.succeeded"]

    rest = await ask_refund(client, merchant, reference)  # no amount: what remains
    assert rest.status_code == 201, rest.text
    assert rest.json()["data"]["amount"] == 1000
    refunded = await payment_of(client, merchant, reference)
    assert (refunded["status"], refunded["amount_refunded"]) == ("refunded", 1500)
    assert await merchant_available(runtime, merchant.id) == 0
    events = dict(await events_of(runtime, reference))
    assert sorted(events) == ["payment.refunded", "payment.succeeded"]
    assert events["payment.refunded"]["amount_refunded"] == 1500

    # Nothing remains: 409 conflict, with or without an amount, and nothing written.
    assert_error(await ask_refund(client, merchant, reference), 409, "conflict")
    assert_error(await ask_refund(client, merchant, reference, amount=1), 409, "conflict")
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 2


async def test_more_than_remains_is_refused_naming_amount(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=1000)
    reference = payment["reference"]
    error = assert_error(
        await ask_refund(client, merchant, reference, amount=1001), 422, "invalid_request"
    )
    assert list(error["details"]) == ["amount"]
    assert "1000 XOF" in error["message"]
    assert (await ask_refund(client, merchant, reference, amount=600)).status_code == 201
    error = assert_error(
        await ask_refund(client, merchant, reference, amount=401), 422, "invalid_request"
    )
    assert list(error["details"]) == ["amount"] and "400 XOF" in error["message"]
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 1
    assert await merchant_available(runtime, merchant.id) == 400
    fetched = await payment_of(client, merchant, reference)
    assert (fetched["status"], fetched["amount_refunded"]) == ("succeeded", 600)


@pytest.mark.parametrize("amount", [0, -5, "100", 10.5, True])
async def test_an_amount_that_is_no_positive_whole_number_is_refused(
    client: httpx.AsyncClient, runtime: Runtime, amount: object
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant)
    response = await ask_refund(client, merchant, payment["reference"], amount=amount)
    assert "amount" in assert_error(response, 422, "invalid_request")["details"]
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 0


async def test_a_partial_refund_the_balance_does_not_cover_takes_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=2000)
    assert (await create(client, merchant.headers(), amount=1500)).status_code == 201
    response = await ask_refund(client, merchant, payment["reference"], amount=600)
    assert_error(response, 402, "insufficient_funds")
    assert (await ask_refund(client, merchant, payment["reference"], amount=500)).status_code == 201
    assert await merchant_available(runtime, merchant.id) == 0
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 1


async def test_pending_refunds_hold_their_amount_and_failed_ones_give_it_back(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, phone_number=FAILS_LATER)
    reference = payment["reference"]
    decided = await client.post(
        f"/api/v1/test-helpers/payments/{reference}/succeed", headers=merchant.headers()
    )
    assert decided.json()["data"]["status"] == "succeeded"
    first = (await ask_refund(client, merchant, reference, amount=400)).json()["data"]
    assert first["status"] == "pending"
    assert_error(await ask_refund(client, merchant, reference, amount=700), 422, "invalid_request")
    second = (await ask_refund(client, merchant, reference)).json()["data"]
    assert (second["status"], second["amount"]) == ("pending", 600)
    assert_error(await ask_refund(client, merchant, reference), 409, "conflict")
    assert await merchant_available(runtime, merchant.id) == 0
    assert (await payment_of(client, merchant, reference))["amount_refunded"] == 0

    clock.advance(runtime.settings.test_settle_delay)
    await worker.drain()
    for pending in (first, second):
        failed = await refund_of(client, merchant, pending["reference"])
        assert failed["status"] == "failed"
        assert failed["failure_code"] == "refused_after_initiation"
        assert failed["failure_message"] == MESSAGES["refused_after_initiation"]
    assert await merchant_available(runtime, merchant.id) == 1000
    fetched = await payment_of(client, merchant, reference)
    assert (fetched["status"], fetched["amount_refunded"]) == ("succeeded", 0)
    # Their amounts are refundable again.
    again = await ask_refund(client, merchant, reference, amount=1000)
    assert again.status_code == 201, again.text


async def test_simultaneous_partial_refunds_never_exceed_the_payment(
    client: httpx.AsyncClient, runtime: Runtime, engine: AsyncEngine
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=1000)
    await paid_payment(client, merchant, amount=5000)  # the balance is not what limits them
    responses = await asyncio.gather(
        *(ask_refund(client, merchant, payment["reference"], amount=150) for _ in range(20))
    )
    # 6 × 150 = 900; the 100 left cannot take another 150.
    assert Counter(r.status_code for r in responses) == {201: 6, 422: 14}
    assert await scalar(runtime, "SELECT coalesce(sum(amount), 0) FROM refunds") == 900
    fetched = await payment_of(client, merchant, payment["reference"])
    assert (fetched["status"], fetched["amount_refunded"]) == ("succeeded", 900)
    assert await merchant_available(runtime, merchant.id) == 6000 - 900
    await assert_ledger_reconciles(engine)


async def test_simultaneous_refunds_to_the_last_unit_refund_the_payment_once(
    client: httpx.AsyncClient, runtime: Runtime, engine: AsyncEngine
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=1000)
    await paid_payment(client, merchant, amount=5000)
    responses = await asyncio.gather(
        *(ask_refund(client, merchant, payment["reference"], amount=100) for _ in range(20))
    )
    assert Counter(r.status_code for r in responses) == {201: 10, 409: 10}
    fetched = await payment_of(client, merchant, payment["reference"])
    assert (fetched["status"], fetched["amount_refunded"]) == ("refunded", 1000)
    kinds = [kind for kind, _ in await events_of(runtime, payment["reference"])]
    assert kinds.count("payment.refunded") == 1
    assert await merchant_available(runtime, merchant.id) == 5000
    await assert_ledger_reconciles(engine)


async def test_simultaneous_pending_refunds_reserve_what_they_take(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    engine: AsyncEngine,
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=1000, phone_number=SUCCEEDS_LATER)
    await paid_payment(client, merchant, amount=5000)
    clock.advance(runtime.settings.test_settle_delay)
    await worker.drain()
    responses = await asyncio.gather(
        *(ask_refund(client, merchant, payment["reference"], amount=150) for _ in range(20))
    )
    assert Counter(r.status_code for r in responses) == {201: 6, 422: 14}
    assert {r.json()["data"]["status"] for r in responses if r.status_code == 201} == {"pending"}
    clock.advance(runtime.settings.test_settle_delay)
    await worker.drain()
    fetched = await payment_of(client, merchant, payment["reference"])
    assert (fetched["status"], fetched["amount_refunded"]) == ("succeeded", 900)
    assert await merchant_available(runtime, merchant.id) == 6000 - 900
    await assert_ledger_reconciles(engine)


@settings(
    max_examples=25,
    deadline=None,
    # `client` and `runtime` are function-scoped but each example makes its own merchant and
    # payment, so examples share no money.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(requests=st.lists(st.integers(min_value=1, max_value=1200) | st.none(), max_size=8))
async def test_any_sequence_of_refunds_matches_the_arithmetic(
    client: httpx.AsyncClient, runtime: Runtime, requests: list[int | None]
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=1000)
    reference = payment["reference"]
    remaining = 1000
    for amount in requests:
        body = {} if amount is None else {"amount": amount}
        response = await ask_refund(client, merchant, reference, **body)
        if remaining == 0:
            assert_error(response, 409, "conflict")
        elif amount is not None and amount > remaining:
            assert_error(response, 422, "invalid_request")
        else:
            assert response.status_code == 201, response.text
            taken = remaining if amount is None else amount
            assert response.json()["data"]["amount"] == taken
            remaining -= taken
    fetched = await payment_of(client, merchant, reference)
    assert fetched["amount_refunded"] == 1000 - remaining
    assert fetched["status"] == ("refunded" if remaining == 0 else "succeeded")
    assert await merchant_available(runtime, merchant.id) == remaining
