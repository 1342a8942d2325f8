"""The circuit breaker of an endpoint (cauri.webhooks.breaker): after enough failures in a
row its attempts are postponed, neither made nor counted, until a probe; a failed probe
opens it again, a successful one closes it, and every delivery keeps all its attempts."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from tests.support import make_merchant, with_settings
from tests.webhooks.builders import send_test, set_endpoint, worker_for
from tests.webhooks.receiver import Answer, Receiver

THRESHOLD = 3
COOLDOWN = 60.0
LOG = text(
    "SELECT d.status, d.attempts, d.next_attempt_at, "
    "  (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS made "
    "FROM webhook_deliveries d"
)
CIRCUIT = text(
    "SELECT consecutive_failures, open_until FROM webhook_endpoints WHERE url IS NOT NULL"
)


async def delivery_log(runtime: Runtime) -> list[dict[str, Any]]:
    """Each delivery's status, attempts, next attempt, and how many attempt rows it has."""
    async with runtime.sessionmaker() as session:
        return [dict(row) for row in (await session.execute(LOG)).mappings()]


async def circuit(runtime: Runtime) -> tuple[int, datetime | None]:
    async with runtime.sessionmaker() as session:
        failures, open_until = (await session.execute(CIRCUIT)).one()
    return failures, open_until


async def test_the_breaker_postpones_attempts_probes_and_closes_on_success(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, receiver: Receiver
) -> None:
    breaking = with_settings(
        runtime, webhook_breaker_threshold=THRESHOLD, webhook_breaker_cooldown=COOLDOWN
    )
    worker = worker_for(breaking)
    receiver.default = Answer(500)
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    for _ in range(THRESHOLD):
        await send_test(client, merchant)
    await worker.drain()
    opened_at = clock.now()
    assert len(receiver.requests) == THRESHOLD
    assert await circuit(runtime) == (THRESHOLD, opened_at + timedelta(seconds=COOLDOWN))

    # Open: a new delivery's first attempt and the retries due at +10 s are postponed to the
    # end of the open period, neither made nor counted.
    await send_test(client, merchant)
    await worker.drain()
    clock.advance(10)
    await worker.drain()
    assert len(receiver.requests) == THRESHOLD
    reopening = opened_at + timedelta(seconds=COOLDOWN)
    held = [
        (d["status"], d["attempts"], d["made"], d["next_attempt_at"])
        for d in await delivery_log(runtime)
    ]
    assert (
        sorted(held) == [("pending", 0, 0, reopening)] + [("pending", 1, 1, reopening)] * THRESHOLD
    )

    # Half-open: one probe goes; it fails, and the breaker opens again for the cooldown.
    clock.advance(COOLDOWN - 10)
    await worker.drain()
    assert len(receiver.requests) == THRESHOLD + 1
    assert await circuit(runtime) == (THRESHOLD + 1, clock.now() + timedelta(seconds=COOLDOWN))

    # The next probe succeeds and closes it; the attempts held back then go out: those the
    # worker's other lanes claimed while the probe was in flight after the probe's timeout,
    # any claimed once it had closed the breaker at once (lanes run side by side: which
    # comes first is the machine's, so only the bounds are the rule).
    receiver.default = Answer(200)
    clock.advance(COOLDOWN)
    await worker.drain()
    assert THRESHOLD + 2 <= len(receiver.requests) <= THRESHOLD + 2 + 3
    assert await circuit(runtime) == (0, None)
    clock.advance(breaking.settings.webhook_timeout + 1)
    await worker.drain()
    assert len(receiver.requests) == THRESHOLD + 2 + 3
    settled = await delivery_log(runtime)
    assert {d["status"] for d in settled} == {"success"}
    # Every attempt made is on the log and counted; none was spent by the breaker.
    assert sum(d["attempts"] for d in settled) == sum(d["made"] for d in settled)
    assert sum(d["made"] for d in settled) == len(receiver.requests)


async def test_failures_below_the_threshold_or_broken_by_a_success_keep_it_closed(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, receiver: Receiver
) -> None:
    breaking = with_settings(runtime, webhook_breaker_threshold=THRESHOLD)
    worker = worker_for(breaking)
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    for answer in (500, 500, 200, 500, 500):
        receiver.default = Answer(answer)
        await send_test(client, merchant)
        await worker.drain()
    assert await circuit(runtime) == (2, None)
    await send_test(client, merchant)
    await worker.drain()
    assert len(receiver.requests) == 6, "no attempt held back"
