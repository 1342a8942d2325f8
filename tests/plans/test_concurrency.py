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
