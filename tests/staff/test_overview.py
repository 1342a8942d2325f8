"""Issue 14, the staff's overview (cauri.staff.overview): today's volume and success rate per
operator and connector, test and live apart; payouts awaiting approval; payments stuck
pending; failing webhook endpoints; each route's availability."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import timedelta

import httpx
import pytest

from cauri.calls.availability import MIN_EXCHANGES
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.staff.overview import Overview, RouteState, Volume, overview
from cauri.worker.runner import Worker
from tests.fakes.mtn_momo import MtnMomoFake
from tests.operators.mtn_live import CONNECTOR, NUMBER, mtn_fake, wire
from tests.payouts.builders import SUCCEEDS, set_limits, top_up
from tests.staff.traffic import API, to_noon_tomorrow, traffic
from tests.support import card_body, make_merchant, momo_body
from tests.webhooks.builders import send_test, set_endpoint
from tests.webhooks.receiver import Receiver


def _figures(volumes: Sequence[Volume]) -> dict[tuple[str | None, bool, str], tuple[int, ...]]:
    return {
        (v.name, v.livemode, v.currency): (v.count, v.succeeded, v.failed, v.succeeded_amount)
        for v in volumes
    }


async def _overview(runtime: Runtime) -> Overview:
    async with unit_of_work(runtime.sessionmaker) as session:
        return await overview(session, runtime)


async def test_today_approvals_stuck_payments_and_failing_endpoints(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    seen = await traffic(client, runtime, clock)
    clock.advance(days=-1)  # back to the day of all but `others`
    await set_limits(runtime, seen.shop.id, approval_threshold=1000)
    await top_up(runtime, seen.shop.id, 10_000, livemode=True)
    held = await client.post(
        f"{API}/payouts",
        json={"amount": 2000, "phone_number": SUCCEEDS, "operator": "mtn"},
        headers=seen.shop.headers(livemode=True),
    )
    assert held.json()["data"]["awaiting_approval"] is True, held.text
    card = await client.post(f"{API}/payments", json=card_body(), headers=seen.shop.headers())
    assert card.json()["data"]["status"] == "pending"
    with Receiver() as gone:
        url = gone.url
    await set_endpoint(client, seen.shop, url)
    await send_test(client, seen.shop)
    for delay in (0, *runtime.settings.retry_delays):  # every attempt fails: given up
        clock.advance(seconds=delay)
        await worker.drain()
    await send_test(client, seen.shop)
    await worker.drain()  # its first attempt failed: retrying
    clock.advance(hours=1)

    found = await _overview(runtime)
    assert found.day.isoformat() == seen.paid["created_at"][:10]
    # Test: paid and the instalment succeeded (1000 + 2000), refused failed, pending and the
    # card undecided; live: one succeeded. `others` was made the next day.
    assert _figures(found.payments.by_operator) == {
        ("VISA", False, "XOF"): (1, 0, 0, 0),
        ("mtn", False, "XOF"): (4, 2, 1, 3000),
        ("mtn", True, "XOF"): (1, 1, 0, 1000),
    }
    rates = {(v.name, v.livemode): v.success_rate for v in found.payments.by_operator}
    assert rates == {("VISA", False): None, ("mtn", False): 2 / 3, ("mtn", True): 1.0}
    # Test mode goes through the simulator; this live one through an offline adapter, which
    # records no operation.
    assert _figures(found.payments.by_connector) == {
        ("simulator", False, "XOF"): (5, 2, 1, 3000),
        (None, True, "XOF"): (1, 1, 0, 1000),
    }
    assert _figures(found.payouts.by_operator) == {
        ("mtn", False, "XOF"): (2, 1, 0, 1000),
        ("mtn", True, "XOF"): (1, 0, 0, 0),
    }

    assert [p.reference for p in found.awaiting_approval.rows] == [held.json()["data"]["reference"]]
    assert found.awaiting_approval.total == 1
    # Pending for over an hour; the card's customer still has its page's lifetime to pay.
    assert [str(p.id) for p in found.stuck_payments.rows] == [seen.pending["reference"]]
    assert found.stuck_payments.total == 1
    assert found.stuck_after == timedelta(hours=1)

    [failing] = found.failing_endpoints
    assert (failing.merchant_id, failing.livemode, failing.url) == (seen.shop.id, False, url)
    assert (failing.exhausted, failing.retrying) == (1, 1)
    assert failing.breaker_open_until is None
    assert found.routes == []


@pytest.fixture
def fake() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        fake.callback_mode = "drop"
        yield fake


async def test_connectors_and_their_availability(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, fake: MtnMomoFake
) -> None:
    to_noon_tomorrow(clock)
    await wire(runtime, fake)
    merchant = await make_merchant(runtime)
    up = await _overview(runtime)
    assert {(r.action, r.state) for r in up.routes} == {
        ("collect", "operational"),
        ("disburse", "operational"),
        ("refund", "operational"),
    }
    # MTN answers 500 to every collection: they wait, then the route closes.
    fake.fault("error_500", times=MIN_EXCHANGES, path="requesttopay")
    live = merchant.headers(livemode=True)
    for _ in range(MIN_EXCHANGES):
        paid = await client.post(
            f"{API}/payments", json=momo_body(phone_number=NUMBER), headers=live
        )
        assert paid.json()["data"]["status"] == "pending", paid.text
    refused = await client.post(
        f"{API}/payments", json=momo_body(phone_number=NUMBER), headers=live
    )
    assert refused.status_code == 402

    found = await _overview(runtime)
    assert RouteState("mtn", "collect", CONNECTOR, "closed") in found.routes
    assert RouteState("mtn", "disburse", CONNECTOR, "operational") in found.routes
    # Refused on a closed route, the last one never reached a connector.
    assert _figures(found.payments.by_connector) == {
        (CONNECTOR, True, "XOF"): (MIN_EXCHANGES, 0, 0, 0),
        (None, True, "XOF"): (1, 0, 1, 0),
    }
    assert _figures(found.payments.by_operator) == {("mtn", True, "XOF"): (6, 0, 1, 0)}
    [figure] = found.payments.by_operator
    assert figure.success_rate == 0.0
