"""Cancellation, expiry and refunds; every row of the spec's plan state table, including 409
on every terminal state (spec: States and transitions, Installment plan)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.plans.builders import (
    PLANS,
    SETTLE_DELAY,
    assert_plan_reconciles,
    available,
    cancel,
    count,
    create_plan,
    escrow,
    expire,
    fetch,
    force_success,
    paid_instalment,
    pay,
    penalised_plan,
    platform,
    set_plan_settings,
)
from tests.support import MerchantKeys, assert_error, card_body, make_merchant, scalar


async def late_refund(
    client: httpx.AsyncClient, merchant: MerchantKeys, runtime: Runtime, payment: str
) -> dict[str, Any]:
    """The refund of a late instalment, as the merchant reads any refund."""
    reference = await scalar(
        runtime, "SELECT reference FROM refunds WHERE CAST(payment_id AS text) = :p", p=payment
    )
    response = await client.get(f"/api/v1/refunds/{reference}", headers=merchant.headers())
    assert response.status_code == 200, response.text
    refund: dict[str, Any] = response.json()["data"]
    return refund


async def refund_number(runtime: Runtime, payment: str) -> str:
    number: str = await scalar(
        runtime, "SELECT phone_number FROM refunds WHERE CAST(payment_id AS text) = :p", p=payment
    )
    return number


async def event_types(runtime: Runtime, reference: str) -> list[str]:
    """The types of the events about one payment (its refund's included), in name order:
    several are emitted at one instant."""
    types = await scalar(
        runtime,
        "SELECT coalesce(array_agg(type ORDER BY type), '{}') FROM events "
        "WHERE data->>'reference' = :r OR data->>'payment' = :r",
        r=reference,
    )
    return list(types)


async def refund_state(runtime: Runtime, plan: str) -> tuple[Any, ...]:
    async with runtime.sessionmaker() as session:
        row = (
            await session.execute(
                text(
                    "SELECT refund_amount, penalty_amount, refund_phone_number, "
                    "refund_failure_reason FROM installment_plans WHERE CAST(id AS text) = :plan"
                ),
                {"plan": plan},
            )
        ).one()
    return tuple(row)


async def test_cancel_keeps_the_plan_pending_then_refunds_minus_the_penalty(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_penalty_percent="10", plan_creation_fee_fixed=300)
    plan = await create_plan(client, merchant, target_amount=10_000)
    reference = plan["reference"]
    await paid_instalment(client, merchant, reference, "22997000000", 2_300)  # counts 2,000
    response = await cancel(client, merchant, reference, "Le client renonce")
    assert response.status_code == 200, response.text
    cancelled = response.json()["data"]
    assert cancelled["status"] == "pending"
    assert cancelled["cancellation_reason"] == "Le client renonce"
    assert cancelled["cancelled_at"] is not None
    assert cancelled["paid_amount"] == 2_000
    await worker.drain()
    fetched = await fetch(client, merchant, reference)
    assert fetched["status"] == "refunded"
    assert fetched["completed_at"] is None
    assert await refund_state(runtime, reference) == (1_800, 200, "22997000000", None)
    assert await platform(runtime, "penalties") == 200
    assert await platform(runtime, "plan_fees") == 300  # the creation fee is not refunded
    assert await escrow(runtime, merchant.id, reference) == 0
    await assert_plan_reconciles(runtime, reference)


async def test_penalty_is_rounded_half_up(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_penalty_percent="2.5")
    plan = await create_plan(client, merchant, target_amount=10_000)
    await paid_instalment(client, merchant, plan["reference"], "22997000000", 1_020)
    await cancel(client, merchant, plan["reference"])
    await worker.drain()
    assert (await refund_state(runtime, plan["reference"]))[:2] == (994, 26)  # 25.5 -> 26
    await assert_plan_reconciles(runtime, plan["reference"])


async def test_nothing_paid_is_refunded_at_once_without_a_body(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant)
    response = await client.post(f"{PLANS}/{plan['reference']}/cancel", headers=merchant.headers())
    assert response.status_code == 200, response.text
    assert response.json()["data"]["status"] == "pending"
    assert response.json()["data"]["cancellation_reason"] is None
    await worker.drain()
    assert (await fetch(client, merchant, plan["reference"]))["status"] == "refunded"
    assert await count(runtime, "SELECT count(*) FROM ledger_transactions") == 0


async def test_cancel_reason_is_bounded(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant)
    error = assert_error(
        await cancel(client, merchant, plan["reference"], "x" * 501), 422, "invalid_request"
    )
    assert "reason" in error["details"]
    assert (await fetch(client, merchant, plan["reference"]))["cancelled_at"] is None


@pytest.mark.parametrize(
    ("number", "right_after", "after_delay", "reason"),
    [
        ("22997000000", "refunded", "refunded", None),
        ("22997000001", "failed", "failed", "refused_at_initiation"),
        ("22997000002", "pending", "pending", None),
        ("22997000003", "pending", "failed", "refused_after_initiation"),
        ("22997004321", "pending", "refunded", None),
    ],
)
async def test_refund_outcome_follows_the_last_four_digits(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    number: str,
    right_after: str,
    after_delay: str,
    reason: str | None,
) -> None:
    merchant, reference = await penalised_plan(client, runtime)
    if number.endswith("0001"):
        # No instalment from a number ending 0001 can succeed in test mode (refused at
        # initiation); the refund's number is the last succeeded instalment's, so this one
        # is paid from another number and then re-numbered.
        payment = await paid_instalment(client, merchant, reference, "22997000000", 3_000)
        async with unit_of_work(runtime.sessionmaker) as session:
            await session.execute(
                text("UPDATE payments SET phone_number = :number WHERE CAST(id AS text) = :id"),
                {"number": number, "id": payment},
            )
    else:
        await paid_instalment(client, merchant, reference, number, 3_000)
    clock.advance(SETTLE_DELAY + 1)  # any delayed instalment outcome is behind us
    await worker.drain()
    assert (await cancel(client, merchant, reference)).status_code == 200
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == right_after
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == after_delay
    refund, penalty, refund_number, failure = await refund_state(runtime, reference)
    assert (refund, penalty, refund_number, failure) == (2_700, 300, number, reason)
    # Sent (paid out or still pending): debited from the escrow when sent. Failed: nothing
    # taken (refused at once) or re-credited (failed later): the refund is back in escrow.
    assert await escrow(runtime, merchant.id, reference) == (
        2_700 if after_delay == "failed" else 0
    )
    assert await platform(runtime, "penalties") == 300
    await assert_plan_reconciles(runtime, reference)


async def test_refund_goes_to_the_last_succeeded_instalment(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=10_000)
    reference = plan["reference"]
    await paid_instalment(client, merchant, reference, "22997000003", 1_000)
    clock.advance(1)
    await paid_instalment(client, merchant, reference, "22966000000", 1_000)
    clock.advance(1)
    refused = await pay(client, merchant, reference, amount=1_000, phone_number="22997000001")
    assert_error(refused, 402, "payment_failed")  # failed instalments are not refunded to
    await cancel(client, merchant, reference)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "refunded"
    assert (await refund_state(runtime, reference))[:3] == (2_000, 0, "22966000000")
    await assert_plan_reconciles(runtime, reference)


async def test_card_paid_plan_fails_on_cancel_for_manual_handling(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant, reference = await penalised_plan(client, runtime)
    await paid_instalment(client, merchant, reference, "22997000000", 1_000)
    clock.advance(1)
    card = await client.post(
        f"{PLANS}/{reference}/payments", json=card_body(amount=2_000), headers=merchant.headers()
    )
    await force_success(client, merchant, card.json()["data"]["reference"])
    await cancel(client, merchant, reference)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "failed"
    assert (await refund_state(runtime, reference)) == (2_700, 300, None, "card_instalment")
    assert await escrow(runtime, merchant.id, reference) == 2_700
    await assert_plan_reconciles(runtime, reference)


async def test_mobile_money_after_a_card_is_refunded(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=10_000)
    reference = plan["reference"]
    card = await client.post(
        f"{PLANS}/{reference}/payments", json=card_body(amount=2_000), headers=merchant.headers()
    )
    await force_success(client, merchant, card.json()["data"]["reference"])
    clock.advance(1)
    await paid_instalment(client, merchant, reference, "22997000000", 1_000)
    await cancel(client, merchant, reference)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "refunded"
    await assert_plan_reconciles(runtime, reference)


async def test_a_pending_instalment_never_delays_the_refund_and_a_late_success_is_refunded_in_full(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_penalty_percent="10", fee_percent="1")
    plan = await create_plan(client, merchant, target_amount=10_000)
    reference = plan["reference"]
    await paid_instalment(client, merchant, reference, "22997000000", 1_000)
    late = await pay(client, merchant, reference, amount=2_000, phone_number="22997005555")
    never = await pay(client, merchant, reference, amount=3_000, phone_number="22997000002")
    assert late.json()["data"]["status"] == never.json()["data"]["status"] == "pending"
    late_reference = late.json()["data"]["reference"]
    assert (await cancel(client, merchant, reference)).status_code == 200
    await worker.drain()
    # The refund of what had settled did not wait: paid out (a 0000 number) at once.
    assert await refund_state(runtime, reference) == (900, 100, "22997000000", None)
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("refunded", 1_000)
    assert_error(await pay(client, merchant, reference, amount=100), 409, "conflict")
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()  # the late instalment succeeds: its refund to 22997005555 starts
    assert await escrow(runtime, merchant.id, reference) == 0  # debited as the refund left
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("refunded", 1_000)
    statuses = {p["reference"]: p["status"] for p in fetched["payments"]}
    assert sorted(statuses.values()) == ["pending", "refunded", "succeeded"]
    assert statuses[late_reference] == "refunded"
    refund = await late_refund(client, merchant, runtime, late_reference)
    assert (refund["status"], refund["amount"], refund["payment"]) == (
        "succeeded",
        2_000,
        late_reference,
    )
    assert await refund_number(runtime, late_reference) == "22997005555"
    assert await event_types(runtime, late_reference) == [
        "payment.refunded",
        "payment.succeeded",
        "refund.succeeded",
    ]
    # No penalty on the late one, and the platform keeps its commission as for any refund.
    assert await platform(runtime, "penalties") == 100
    assert await platform(runtime, "fees") == 10 + 20
    assert await available(runtime, merchant.id) == 0
    assert await escrow(runtime, merchant.id, reference) == 0
    await assert_plan_reconciles(runtime, reference)


async def test_a_late_first_instalment_is_refunded_with_its_creation_fee_part(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_penalty_percent="10", plan_creation_fee_fixed=300)
    plan = await create_plan(client, merchant, target_amount=10_000)
    reference = plan["reference"]
    late = await pay(client, merchant, reference, amount=2_300, phone_number="22997005555")
    await cancel(client, merchant, reference)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "refunded"  # nothing paid
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()
    refund = await late_refund(client, merchant, runtime, late.json()["data"]["reference"])
    assert (refund["status"], refund["amount"]) == ("succeeded", 2_300)
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("refunded", 0)
    assert await platform(runtime, "plan_fees") == 0
    assert await platform(runtime, "penalties") == 0
    await assert_plan_reconciles(runtime, reference)


@pytest.mark.parametrize(
    ("refund_to", "right_after"),
    [("22997000000", "refunded"), ("22997005555", "pending")],
)
async def test_a_late_card_instalment_stays_in_escrow_and_fails_the_plan_for_support(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    refund_to: str,
    right_after: str,
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=10_000)
    reference = plan["reference"]
    await paid_instalment(client, merchant, reference, refund_to, 1_000)
    card = await client.post(
        f"{PLANS}/{reference}/payments", json=card_body(amount=2_000), headers=merchant.headers()
    )
    await cancel(client, merchant, reference)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == right_after
    await force_success(client, merchant, card.json()["data"]["reference"])
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("failed", 1_000)
    assert [p["status"] for p in fetched["payments"]] == ["succeeded", "succeeded"]
    assert await refund_state(runtime, reference) == (
        1_000,
        0,
        refund_to,
        "late_card_instalment",
    )
    assert await escrow(runtime, merchant.id, reference) == 2_000
    assert await count(runtime, "SELECT count(*) FROM refunds") == 0
    await assert_plan_reconciles(runtime, reference, held=2_000)


@pytest.mark.parametrize(
    ("number", "reason"),
    [("22997000001", "refused_at_initiation"), ("22997000003", "refused_after_initiation")],
)
async def test_a_late_refund_the_operator_refuses_leaves_the_money_in_escrow_for_support(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    number: str,
    reason: str,
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=10_000)
    reference = plan["reference"]
    late = await pay(client, merchant, reference, amount=2_000, phone_number="22997000002")
    late_reference = late.json()["data"]["reference"]
    await cancel(client, merchant, reference)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "refunded"
    # A number whose collection succeeded but whose refund the simulator refuses.
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text("UPDATE payments SET phone_number = :number WHERE CAST(id AS text) = :id"),
            {"number": number, "id": late_reference},
        )
    await force_success(client, merchant, late_reference)
    await worker.drain()
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()
    refund = await late_refund(client, merchant, runtime, late_reference)
    assert (refund["status"], refund["amount"]) == ("failed", 2_000)
    assert await refund_state(runtime, reference) == (0, 0, None, "late_instalment_refund_failed")
    fetched = await fetch(client, merchant, reference)
    assert fetched["status"] == "failed"
    assert [p["status"] for p in fetched["payments"]] == ["succeeded"]
    assert await escrow(runtime, merchant.id, reference) == 2_000
    assert await available(runtime, merchant.id) == 0
    assert await event_types(runtime, late_reference) == ["payment.succeeded", "refund.failed"]
    assert reason == await scalar(
        runtime, "SELECT failure_reason FROM refunds WHERE reference = :r", r=refund["reference"]
    )
    await assert_plan_reconciles(runtime, reference, held=2_000)


async def test_a_pending_instalment_that_fails_is_not_refunded(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=10_000)
    reference = plan["reference"]
    await paid_instalment(client, merchant, reference, "22997000000", 1_000)
    await pay(client, merchant, reference, amount=2_000, phone_number="22997000003")
    await cancel(client, merchant, reference)
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "refunded"
    assert (await refund_state(runtime, reference))[:3] == (1_000, 0, "22997000000")
    await assert_plan_reconciles(runtime, reference)


async def test_expiry_runs_at_expires_at_on_the_clock(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant, reference = await penalised_plan(client, runtime)
    await paid_instalment(client, merchant, reference, "22997000000", 1_000)
    clock.advance(days=60, seconds=-1)
    await worker.drain()
    assert (await fetch(client, merchant, reference))["cancelled_at"] is None
    clock.advance(seconds=1)
    await worker.drain()
    fetched = await fetch(client, merchant, reference)
    assert fetched["status"] == "refunded"
    assert fetched["cancellation_reason"] == "expired"
    assert fetched["cancelled_at"] == fetched["expires_at"]
    assert (await refund_state(runtime, reference))[:2] == (900, 100)
    await assert_plan_reconciles(runtime, reference)


async def test_expiry_leaves_a_completed_plan_alone(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=1_000)
    await pay(client, merchant, plan["reference"], amount=1_000)
    clock.advance(days=61)
    await worker.drain()
    fetched = await fetch(client, merchant, plan["reference"])
    assert (fetched["status"], fetched["cancelled_at"]) == ("succeeded", None)
    assert await count(runtime, "SELECT count(*) FROM jobs") == 0
    await assert_plan_reconciles(runtime, plan["reference"])


async def test_expire_helper_runs_the_expiry_now(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=10_000, external_id="p")
    await paid_instalment(client, merchant, plan["reference"], "22997000000", 1_000)
    clock.advance(3600)
    assert_error(await expire(client, merchant, "p", livemode=True), 404, "not_found")
    assert_error(await expire(client, merchant, "inconnu"), 404, "not_found")
    response = await expire(client, merchant, "p")
    assert response.status_code == 200, response.text
    expired = response.json()["data"]
    assert expired["status"] == "pending"
    assert expired["cancellation_reason"] == "expired"
    assert expired["expires_at"] == expired["cancelled_at"] == clock.now().isoformat()
    await worker.drain()
    assert (await fetch(client, merchant, "p"))["status"] == "refunded"
    clock.advance(days=61)  # the expiry scheduled at creation finds nothing left to do
    await worker.drain()
    assert (await fetch(client, merchant, "p"))["status"] == "refunded"
    await assert_plan_reconciles(runtime, plan["reference"])


async def test_an_instalment_past_expires_at_is_refused_and_the_plan_expires_at_once(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant, reference = await penalised_plan(client, runtime)
    await paid_instalment(client, merchant, reference, "22997000000", 1_000)
    clock.advance(days=60)  # expires_at; no worker has run the expiry job (lagging, --no-worker)
    error = assert_error(await pay(client, merchant, reference, amount=1_000), 409, "conflict")
    assert "expiré" in error["message"]
    assert await count(runtime, "SELECT count(*) FROM payments") == 1
    fetched = await fetch(client, merchant, reference)  # the expiry was kept despite the 409
    assert (fetched["status"], fetched["cancellation_reason"]) == ("pending", "expired")
    assert fetched["cancelled_at"] == fetched["expires_at"]
    assert_error(await pay(client, merchant, reference, amount=1_000), 409, "conflict")
    await worker.drain()
    assert (await fetch(client, merchant, reference))["status"] == "refunded"
    assert (await refund_state(runtime, reference))[:2] == (900, 100)
    assert await count(runtime, "SELECT count(*) FROM jobs") == 0
    await assert_plan_reconciles(runtime, reference)


async def test_a_cancel_past_expires_at_is_refused_and_the_plan_expires_instead(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant, reference = await penalised_plan(client, runtime)
    await paid_instalment(client, merchant, reference, "22997000000", 1_000)
    clock.advance(days=61)
    assert_error(await cancel(client, merchant, reference, "trop tard"), 409, "conflict")
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["cancellation_reason"]) == ("pending", "expired")
    assert fetched["cancelled_at"] == fetched["expires_at"]
    assert_error(await cancel(client, merchant, reference, "encore"), 409, "conflict")
    await worker.drain()
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["cancellation_reason"]) == ("refunded", "expired")
    await assert_plan_reconciles(runtime, reference)


async def test_a_plan_never_completes_after_its_expires_at(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_penalty_percent="10")
    plan = await create_plan(client, merchant, target_amount=2_000)
    reference = plan["reference"]
    await paid_instalment(client, merchant, reference, "22997000000", 1_000)
    pending = await pay(client, merchant, reference, amount=1_000, phone_number="22997005555")
    payment = pending.json()["data"]["reference"]
    clock.advance(days=60)
    # The customer validates after expires_at, before any job has run: the plan expires
    # instead of completing, and this instalment is a late one.
    await force_success(client, merchant, payment)
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("pending", 1_000)
    assert (fetched["cancellation_reason"], fetched["completed_at"]) == ("expired", None)
    assert await available(runtime, merchant.id) == 0
    await worker.drain()
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("refunded", 1_000)
    # What counted goes back minus the penalty to the last instalment that counted; the
    # late one goes back in full to its own payer.
    assert await refund_state(runtime, reference) == (900, 100, "22997000000", None)
    statuses = {p["reference"]: p["status"] for p in fetched["payments"]}
    assert statuses[payment] == "refunded"
    assert (await late_refund(client, merchant, runtime, payment))["amount"] == 1_000
    assert await refund_number(runtime, payment) == "22997005555"
    assert await platform(runtime, "penalties") == 100
    assert await available(runtime, merchant.id) == 0
    assert await escrow(runtime, merchant.id, reference) == 0
    await assert_plan_reconciles(runtime, reference)


async def _succeeded(
    client: httpx.AsyncClient, merchant: MerchantKeys, worker: Worker, reference: str
) -> None:
    await pay(client, merchant, reference, amount=10_000)


async def _refunded(
    client: httpx.AsyncClient, merchant: MerchantKeys, worker: Worker, reference: str
) -> None:
    await paid_instalment(client, merchant, reference, "22997000000", 1_000)
    await cancel(client, merchant, reference)
    await worker.drain()


async def _failed(
    client: httpx.AsyncClient, merchant: MerchantKeys, worker: Worker, reference: str
) -> None:
    card = await client.post(
        f"{PLANS}/{reference}/payments", json=card_body(amount=1_000), headers=merchant.headers()
    )
    await force_success(client, merchant, card.json()["data"]["reference"])
    await cancel(client, merchant, reference)
    await worker.drain()


async def _cancelling(
    client: httpx.AsyncClient, merchant: MerchantKeys, worker: Worker, reference: str
) -> None:
    await paid_instalment(client, merchant, reference, "22997000002", 1_000)
    await cancel(client, merchant, reference)
    await worker.drain()  # the refund to a 0002 number stays pending


Setup = Callable[[httpx.AsyncClient, MerchantKeys, Worker, str], Awaitable[None]]


@pytest.mark.parametrize(
    ("setup", "status"),
    [
        (_succeeded, "succeeded"),
        (_refunded, "refunded"),
        (_failed, "failed"),
        (_cancelling, "pending"),
    ],
)
async def test_no_instalment_cancel_or_expiry_unless_actively_pending(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, setup: Setup, status: str
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=10_000)
    reference = plan["reference"]
    await setup(client, merchant, worker, reference)
    before = await fetch(client, merchant, reference)
    assert before["status"] == status
    payments = await count(runtime, "SELECT count(*) FROM payments")
    assert_error(await pay(client, merchant, reference, amount=100), 409, "conflict")
    assert_error(
        await client.post(
            f"{PLANS}/{reference}/payments", json=card_body(amount=100), headers=merchant.headers()
        ),
        409,
        "conflict",
    )
    assert_error(await cancel(client, merchant, reference, "encore"), 409, "conflict")
    assert_error(await expire(client, merchant, reference), 409, "conflict")
    await worker.drain()
    assert await fetch(client, merchant, reference) == before
    assert await count(runtime, "SELECT count(*) FROM payments") == payments
    await assert_plan_reconciles(runtime, reference)
