"""One merchant cannot starve everyone's jobs (issue 8), on the real clock, over real HTTP,
with two real workers: 1,000 deliveries pending to an endpoint that accepts connections and
never answers; meanwhile a payout send and a plan expiry run, and another merchant's
deliveries arrive, each within 2 s of being enqueued."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy import text

from cauri.jobs import handlers
from cauri.kit.clock import SystemClock
from cauri.kit.db import unit_of_work
from cauri.plans import jobs as plan_jobs
from cauri.runtime import Runtime
from cauri.webhooks.scheduling import endpoint_group
from cauri.worker import lanes
from cauri.worker.runner import Worker
from tests.payouts.builders import (
    FakeLiveOperator,
    approve,
    create,
    live_operator,
    set_limits,
    top_up,
)
from tests.plans.builders import create_plan
from tests.support import MerchantKeys, make_merchant, scalar
from tests.webhooks.builders import api_client, send_test, set_endpoint
from tests.webhooks.receiver import Answer, Receiver
from tests.worker.builders import eventually

BACKLOG = 1_000
BOUND = 2.0  # seconds from enqueue to effect

# The backlog in three statements' worth of one: events, their deliveries, their first jobs,
# as `events.emit` would have written them one by one.
PENDING_DELIVERIES = text(
    "WITH event AS (INSERT INTO events (id, merchant_id, livemode, type, data, created_at) "
    "  SELECT gen_random_uuid(), :merchant, true, 'webhook.test', '{}'::jsonb, now() "
    "  FROM generate_series(1, :count) RETURNING id), "
    "delivery AS (INSERT INTO webhook_deliveries (id, event_id, merchant_id, livemode, event, "
    "  url, status, attempts, series_attempts, created_at, next_attempt_at) "
    "  SELECT id, id, :merchant, true, 'webhook.test', :url, 'pending', 0, 0, now(), now() "
    "  FROM event RETURNING id) "
    "INSERT INTO jobs (kind, lane, group_key, payload, run_at, max_attempts, created_at) "
    "SELECT 'webhooks.deliver', :lane, :group, "
    "  jsonb_build_object('delivery_id', id::text, 'attempt', 1), now(), 10, now() FROM delivery"
)


@asynccontextmanager
async def workers(runtime: Runtime, count: int) -> AsyncIterator[None]:
    stop = asyncio.Event()
    tasks = [
        asyncio.create_task(Worker(runtime, handlers()).run_forever(stop)) for _ in range(count)
    ]
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)


async def within_bound(started: float, effect: Callable[[], Awaitable[bool]]) -> float:
    """Seconds from `started` until the check `effect` first holds."""
    await eventually(effect, timeout=BOUND * 5)
    return time.monotonic() - started


async def test_a_hanging_endpoint_starves_no_one(runtime: Runtime) -> None:
    real = dataclasses.replace(runtime, clock=SystemClock())
    operator = live_operator(real)
    hanging_merchant = await make_merchant(real, name="Muet")
    other_merchant = await make_merchant(real, name="Attentif")
    payer = await make_merchant(real, name="Payeur")
    await top_up(real, payer.id, 50_000, livemode=True)
    await set_limits(real, payer.id, approval_threshold=1_000)

    with (
        Receiver(Answer(hang=True)) as hanging,
        Receiver() as healthy,
    ):
        async with api_client(real) as client:
            await set_endpoint(client, hanging_merchant, hanging.url, livemode=True)
            await set_endpoint(client, other_merchant, healthy.url, livemode=True)
            held = (await create(client, payer.headers(True), amount=5_000)).json()["data"]
            plan = await create_plan(client, payer, livemode=True)
            async with unit_of_work(real.sessionmaker) as session:
                await session.execute(
                    PENDING_DELIVERIES,
                    {
                        "merchant": hanging_merchant.id,
                        "count": BACKLOG,
                        "url": hanging.url,
                        "lane": lanes.WEBHOOKS_LIVE,
                        "group": endpoint_group(hanging_merchant.id, True),
                    },
                )
            async with workers(real, count=2):
                try:
                    await expect_no_starvation(
                        Scene(real, client, operator, hanging, healthy, other_merchant, held, plan)
                    )
                finally:
                    # Its hung connections close: the attempts in flight end, the workers stop.
                    hanging.stop()


@dataclass(frozen=True)
class Scene:
    real: Runtime
    client: httpx.AsyncClient
    operator: FakeLiveOperator
    hanging: Receiver
    healthy: Receiver
    other: MerchantKeys  # a merchant whose endpoint answers
    held: dict[str, Any]  # a live payout held for approval
    plan: dict[str, Any]  # a live plan


async def expect_no_starvation(scene: Scene) -> None:
    real, hanging, healthy, held, plan = (
        scene.real,
        scene.hanging,
        scene.healthy,
        scene.held,
        scene.plan,
    )
    cap = real.settings.webhook_endpoint_concurrency
    await hanging.wait_for(cap)  # the hanging endpoint now holds its slots

    started = time.monotonic()
    await approve(real, held["reference"])

    async def payout_sent() -> bool:
        return any(d.reference == held["reference"] for d in scene.operator.disbursed)

    assert await within_bound(started, payout_sent) < BOUND

    started = time.monotonic()
    async with unit_of_work(real.sessionmaker) as session:
        # The expiry job expires a plan only once its expires_at has passed: bring it forward.
        await session.execute(
            text("UPDATE installment_plans SET expires_at = :now WHERE id = CAST(:id AS uuid)"),
            {"now": real.clock.now(), "id": plan["reference"]},
        )
        await plan_jobs.EXPIRE.enqueue(
            session, plan_jobs.PlanJob(plan["reference"]), livemode=True, now=real.clock.now()
        )

    async def plan_expired() -> bool:
        reason = await scalar(
            real,
            "SELECT cancellation_reason FROM installment_plans WHERE id = CAST(:id AS uuid)",
            id=plan["reference"],
        )
        return bool(reason == "expired")

    assert await within_bound(started, plan_expired) < BOUND

    for n in range(1, 4):
        started = time.monotonic()
        await send_test(scene.client, scene.other, livemode=True)

        async def arrived(n: int = n) -> bool:
            return len(healthy.requests) >= n

        assert await within_bound(started, arrived) < BOUND

    # The hanging endpoint held its cap of slots, no more, across both workers.
    assert len(hanging.requests) == cap
    waiting = "SELECT count(*) FROM jobs WHERE kind = 'webhooks.deliver' AND status = 'queued'"
    assert await scalar(real, waiting) >= BACKLOG - cap
