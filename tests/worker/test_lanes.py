"""Job lanes: money jobs never wait behind webhook deliveries, live jobs never behind test
ones; a group (a webhook endpoint) never runs more than its cap at once, across workers;
a lease is renewed while its handler runs."""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.clock import ManualClock, SystemClock
from cauri.runtime import Runtime
from cauri.webhooks.jobs import DELIVER
from cauri.worker import lanes, queue
from cauri.worker.jobs import Handler
from cauri.worker.runner import Worker
from tests.support import with_settings
from tests.worker.builders import KIND, enqueue, eventually, job, job_count

MONEY = "payouts.send_approved"  # any kind but a delivery is a money job


@asynccontextmanager
async def running(
    runtime: Runtime, handlers: Mapping[str, Handler], *, count: int = 1, concurrency: int = 8
) -> AsyncIterator[None]:
    stop = asyncio.Event()
    workers = [Worker(runtime, handlers, concurrency=concurrency) for _ in range(count)]
    tasks = [asyncio.create_task(worker.run_forever(stop)) for worker in workers]
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)


class Blocking:
    """A handler that holds every job until released, counting those in flight per key."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started: list[dict[str, Any]] = []
        self.in_flight: Counter[str] = Counter()
        self.most: Counter[str] = Counter()

    async def __call__(
        self, session: AsyncSession, runtime: Runtime, payload: dict[str, Any]
    ) -> None:
        key = str(payload.get("group"))
        self.started.append(payload)
        self.in_flight[key] += 1
        self.most[key] = max(self.most[key], self.in_flight[key])
        try:
            await self.release.wait()
        finally:
            self.in_flight[key] -= 1


def recorder(ran: asyncio.Queue[dict[str, Any]]) -> Handler:
    async def handler(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
        ran.put_nowait(payload)

    return handler


def test_each_lane_has_its_own_share_of_the_concurrency() -> None:
    assert lanes.slots(32) == {
        lanes.MONEY_LIVE: 8,
        lanes.MONEY_TEST: 4,
        lanes.WEBHOOKS_LIVE: 16,
        lanes.WEBHOOKS_TEST: 4,
    }
    assert set(lanes.slots(1).values()) == {1}, "no lane is ever left without a slot"


async def test_the_lane_is_decided_at_enqueue_from_the_family_and_environment(
    runtime: Runtime,
) -> None:
    cases = {
        (DELIVER.name, True): lanes.WEBHOOKS_LIVE,
        (DELIVER.name, False): lanes.WEBHOOKS_TEST,
        (MONEY, True): lanes.MONEY_LIVE,
        ("plans.expire", False): lanes.MONEY_TEST,
    }
    for (kind, livemode), lane in cases.items():
        row = await job(runtime, await enqueue(runtime, {}, kind=kind, livemode=livemode))
        assert row is not None and row["lane"] == lane, (kind, livemode)


async def test_money_jobs_do_not_wait_behind_webhook_deliveries(runtime: Runtime) -> None:
    deliveries, money = Blocking(), asyncio.Queue[dict[str, Any]]()
    for n in range(40):
        await enqueue(runtime, {"n": n}, kind=DELIVER.name)
    async with running(runtime, {DELIVER.name: deliveries, MONEY: recorder(money)}):
        await eventually(until(lambda: len(deliveries.started) >= 4))
        await enqueue(runtime, {"payout": 1}, kind=MONEY)
        # Every delivery slot is taken and 36 deliveries wait; the payout runs all the same.
        assert await asyncio.wait_for(money.get(), timeout=5) == {"payout": 1}
        assert len(deliveries.started) == lanes.slots(8)[lanes.WEBHOOKS_LIVE]
        deliveries.release.set()
        await eventually(lambda: _all_done(runtime))


async def test_live_jobs_do_not_wait_behind_test_jobs(runtime: Runtime) -> None:
    held, live = Blocking(), asyncio.Queue[dict[str, Any]]()

    async def handler(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
        if payload.get("live"):
            await recorder(live)(session, runtime, payload)
        else:
            await held(session, runtime, payload)

    for n in range(20):
        await enqueue(runtime, {"n": n}, livemode=False)
    async with running(runtime, {KIND: handler}):
        await eventually(until(lambda: bool(held.started)))
        await enqueue(runtime, {"live": True}, livemode=True)
        assert await asyncio.wait_for(live.get(), timeout=5) == {"live": True}
        assert len(held.started) == lanes.slots(8)[lanes.MONEY_TEST]
        held.release.set()
        await eventually(lambda: _all_done(runtime))


async def test_a_group_runs_at_most_its_cap_across_workers(runtime: Runtime) -> None:
    """Two workers with room for 16 deliveries each: the failing endpoint's 50 deliveries
    take 4 slots in all, and six other endpoints' deliveries all run meanwhile."""
    cap = runtime.settings.webhook_endpoint_concurrency
    blocking = Blocking()
    for n in range(50):
        await enqueue(runtime, {"group": "hanging", "n": n}, kind=DELIVER.name, group="hanging")
    for n in range(6):
        await enqueue(runtime, {"group": "others"}, kind=DELIVER.name, group=f"other {n}")
    async with running(runtime, {DELIVER.name: blocking}, count=2, concurrency=32):
        await eventually(until(lambda: blocking.in_flight["others"] == 6))
        await asyncio.sleep(0.3)  # room for a claim beyond the cap to show up
        assert blocking.in_flight["hanging"] == cap
        blocking.release.set()
        await eventually(lambda: _all_done(runtime), timeout=15)
    assert blocking.most["hanging"] == cap


async def test_concurrent_claims_together_take_no_more_than_the_cap(
    runtime: Runtime, clock: ManualClock
) -> None:
    for n in range(30):
        await enqueue(runtime, {"n": n}, kind=DELIVER.name, group="endpoint")

    async def claim() -> list[queue.ClaimedJob]:
        async with runtime.sessionmaker() as session, session.begin():
            return await queue.claim(
                session, lane=lanes.WEBHOOKS_LIVE, now=clock.now(), limit=16, lease=60, group_cap=4
            )

    claims = await asyncio.gather(*(claim() for _ in range(6)))
    assert sum(len(claimed) for claimed in claims) == 4
    clock.advance(60)  # their leases ran out: their workers died
    assert len(await claim()) == 4, "a lease run out frees its place in the group"


async def test_a_slow_handler_keeps_its_lease_and_runs_once(runtime: Runtime) -> None:
    """A 1 s lease, a handler that takes 3 s, two workers on the real clock: the lease is
    renewed while the handler runs, so the other worker never takes the job over."""
    real = dataclasses.replace(
        with_settings(runtime, job_lease_seconds=1.0, worker_poll_interval=0.1),
        clock=SystemClock(),
    )
    started: list[int] = []

    async def slow(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
        started.append(payload["n"])
        await asyncio.sleep(3)

    job_id = await enqueue(real, {"n": 1})
    async with running(real, {KIND: slow}, count=2):
        await eventually(lambda: _gone(real, job_id), timeout=15)
    assert started == [1]


async def _all_done(runtime: Runtime) -> bool:
    return await job_count(runtime) == 0


async def _gone(runtime: Runtime, job_id: int) -> bool:
    return await job(runtime, job_id) is None


def until(condition: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    """`condition`, as the coroutine `eventually` polls."""

    async def check() -> bool:
        return condition()

    return check
