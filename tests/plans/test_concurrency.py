"""Many simultaneous instalments on one plan, and a cancellation racing them (the plan row is
locked by each: nothing over-reserves the target, one consistent state at the end)."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.plans.builders import (
    SETTLE_DELAY,
    assert_plan_reconciles,
    available,
    cancel,
    count,
    create_plan,
    escrow,
    fetch,
    pay,
    platform,
    set_plan_settings,
)
from tests.support import make_merchant

SIMULTANEOUS = 120


async def test_simultaneous_instalments_never_pass_the_target(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_creation_fee_fixed=500)
    plan = await create_plan(client, merchant, target_amount=50_000)
    reference = plan["reference"]
    responses = await asyncio.gather(
        *(pay(client, merchant, reference, amount=1_000) for _ in range(SIMULTANEOUS))
    )
    # The first counts 500 (it pays the fee), the next 49 count 1,000: 49,500. The other 70
    # would pass the target and are refused before any operator.
    assert Counter(r.status_code for r in responses) == {201: 50, 422: SIMULTANEOUS - 50}
    assert all(r.json()["data"]["status"] == "succeeded" for r in responses if r.status_code == 201)
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("pending", 49_500)
    assert len(fetched["payments"]) == 50
    assert await count(runtime, "SELECT count(*) FROM payments") == 50
    assert await count(runtime, "SELECT count(*) FROM payments WHERE plan_fee_amount > 0") == 1
    assert await escrow(runtime, merchant.id, reference) == 49_500
    assert await available(runtime, merchant.id) == 0
    assert await platform(runtime, "plan_fees") == 500
    await assert_plan_reconciles(runtime, reference)
    # The last 500 completes it: the whole escrow moves once.
    assert (await pay(client, merchant, reference, amount=500)).status_code == 201
    assert (await fetch(client, merchant, reference))["status"] == "succeeded"
    assert await escrow(runtime, merchant.id, reference) == 0
    assert await available(runtime, merchant.id) == 50_000
    await assert_plan_reconciles(runtime, reference)


async def test_simultaneous_pending_instalments_reserve_and_settle_concurrently(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=30_000)
    reference = plan["reference"]
    numbers = [f"2299700{i:04d}" for i in range(1_000, 1_000 + SIMULTANEOUS)]
    responses = await asyncio.gather(
        *(pay(client, merchant, reference, amount=1_000, phone_number=n) for n in numbers)
    )
    assert Counter(r.status_code for r in responses) == {201: 30, 422: SIMULTANEOUS - 30}
    assert (await fetch(client, merchant, reference))["paid_amount"] == 0
    assert await escrow(runtime, merchant.id, reference) == 0
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()  # the 30 delayed outcomes settle at once, concurrently
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("succeeded", 30_000)
    assert await escrow(runtime, merchant.id, reference) == 0
    assert await available(runtime, merchant.id) == 30_000
    assert (
        await count(runtime, "SELECT count(*) FROM ledger_transactions WHERE kind = 'plan_release'")
        == 1
    )
    await assert_plan_reconciles(runtime, reference)


async def test_a_cancel_racing_instalments_ends_in_one_consistent_state(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_penalty_percent="10")
    plan = await create_plan(client, merchant, target_amount=1_000_000)
    reference = plan["reference"]
    instalments = [pay(client, merchant, reference, amount=1_000) for _ in range(60)]
    cancels = [cancel(client, merchant, reference, "course") for _ in range(3)]
    responses = await asyncio.gather(*instalments[:30], *cancels, *instalments[30:])
    paid = [r for r in responses[:30] + responses[33:] if r.status_code == 201]
    refused = [r for r in responses[:30] + responses[33:] if r.status_code != 201]
    assert {r.status_code for r in refused} <= {409}
    assert Counter(r.status_code for r in responses[30:33]) == {200: 1, 409: 2}
    # Every accepted instalment was counted before the cancel; none was written after it.
    assert await count(runtime, "SELECT count(*) FROM payments") == len(paid)
    await worker.drain()
    fetched = await fetch(client, merchant, reference)
    total = 1_000 * len(paid)
    assert fetched["paid_amount"] == total
    assert fetched["status"] == "refunded"
    penalty = total // 10
    assert await platform(runtime, "penalties") == penalty
    assert await escrow(runtime, merchant.id, reference) == 0
    assert await available(runtime, merchant.id) == 0
    await assert_plan_reconciles(runtime, reference)


async def test_instalments_on_many_plans_at_once_stay_separate(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    plans = [await create_plan(client, merchant, target_amount=5_000) for _ in range(4)]
    await asyncio.gather(
        *(pay(client, merchant, p["reference"], amount=1_000) for p in plans for _ in range(6))
    )
    for plan in plans:
        fetched = await fetch(client, merchant, plan["reference"])
        assert (fetched["status"], fetched["paid_amount"]) == ("succeeded", 5_000)
        await assert_plan_reconciles(runtime, plan["reference"])
    assert await available(runtime, merchant.id) == 20_000


async def test_late_instalments_settling_while_the_cancellation_starts_are_refunded_once(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_penalty_percent="10")
    plan = await create_plan(client, merchant, target_amount=1_000_000)
    reference = plan["reference"]
    numbers = [f"2299700{i:04d}" for i in range(1_000, 1_040)]
    created = await asyncio.gather(
        *(pay(client, merchant, reference, amount=1_000, phone_number=n) for n in numbers)
    )
    pending = [r.json()["data"]["reference"] for r in created]
    # Customers validate while the merchant cancels and the worker starts the refund: 20
    # start before the cancel, 15 with it (each settles before the cancellation, counted, or
    # after it, late), 5 once the cancel has answered, while the refund starts (late).
    cancelling, cancelled, first_ones_settled = asyncio.Event(), asyncio.Event(), asyncio.Event()
    settled: list[str] = []

    async def decide(payment: str, after: asyncio.Event | None = None) -> httpx.Response:
        if after is not None:
            await after.wait()
        response = await client.post(
            f"/api/v1/test-helpers/payments/{payment}/succeed", headers=merchant.headers()
        )
        settled.append(payment)
        if len(settled) >= 5:
            first_ones_settled.set()
        return response

    async def cancel_amid_decisions() -> httpx.Response:
        await first_ones_settled.wait()
        cancelling.set()
        response = await cancel(client, merchant, reference)
        cancelled.set()
        return response

    async def start_refund_as_soon_as_cancelled() -> None:
        await cancelled.wait()
        started = "SELECT count(*) FROM installment_plans WHERE refund_amount IS NOT NULL"
        while not await count(runtime, started):
            await worker.drain()

    responses = await asyncio.gather(
        *(decide(p) for p in pending[:20]),
        cancel_amid_decisions(),
        *(decide(p, after=cancelling) for p in pending[20:35]),
        *(decide(p, after=cancelled) for p in pending[35:]),
        start_refund_as_soon_as_cancelled(),
    )
    assert {r.status_code for r in responses[:-1]} == {200}
    for _ in range(3):  # delayed refunds: the plan's, and each late instalment's
        clock.advance(SETTLE_DELAY + 1)
        await worker.drain()
    fetched = await fetch(client, merchant, reference)
    counted = [p for p in fetched["payments"] if p["status"] == "succeeded"]
    late = [p for p in fetched["payments"] if p["status"] == "refunded"]
    assert len(counted) >= 5 and len(counted) + len(late) == len(numbers)
    assert {p["reference"] for p in late} >= set(pending[35:])
    assert fetched["status"] == "refunded"
    assert fetched["paid_amount"] == 1_000 * len(counted)
    # Every late instalment has exactly one refund, succeeded, of its whole amount; no
    # counted one has any: nothing is refunded twice.
    refunds = await count(runtime, "SELECT count(*) FROM refunds WHERE status = 'succeeded'")
    assert refunds == len(late) == await count(runtime, "SELECT count(*) FROM refunds")
    assert await count(
        runtime, "SELECT count(DISTINCT payment_id) FROM refunds WHERE amount = 1000"
    ) == len(late)
    assert await platform(runtime, "penalties") == 100 * len(counted)
    assert await escrow(runtime, merchant.id, reference) == 0
    assert await available(runtime, merchant.id) == 0
    await assert_plan_reconciles(runtime, reference)
