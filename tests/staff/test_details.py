"""Issue 14, the staff's detail of one payment, plan, payout or refund (cauri.staff.details):
the resource, its ledger transactions with their postings, its operator operations with
their exchanges, its events with their webhook deliveries and attempts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.errors import NotFound
from cauri.runtime import Runtime
from cauri.staff import details
from cauri.staff.details import Trail
from cauri.worker.runner import Worker
from tests.calls.builders import SUCCEEDED, ScriptedNetwork
from tests.plans.builders import cancel, create_plan, paid_instalment, set_plan_settings
from tests.staff.traffic import API, traffic
from tests.support import make_merchant, momo_body
from tests.webhooks.builders import set_endpoint
from tests.webhooks.receiver import Receiver

LIVE_NUMBER = "22997123456"


def _ledger(trail: Trail) -> list[tuple[str, str | None, list[tuple[str, int]]]]:
    return [
        (
            booked.transaction.kind,
            booked.transaction.reference,
            [(posting.account.split(":")[0], posting.amount) for posting in booked.postings],
        )
        for booked in trail.ledger
    ]


def _sums(trail: Trail) -> set[int]:
    return {sum(p.amount for p in booked.postings) for booked in trail.ledger}


def _events(trail: Trail) -> list[tuple[str, Any]]:
    return [(notified.event.type, notified.event.data["reference"]) for notified in trail.events]


async def _gone_endpoint(client: httpx.AsyncClient, merchant: Any, *, livemode: bool) -> str:
    """An endpoint nobody listens on: each attempt fails to connect."""
    with Receiver() as gone:
        url = gone.url
    await set_endpoint(client, merchant, url, livemode=livemode)
    return url


async def test_a_live_payment_and_its_refund(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, clock: ManualClock
) -> None:
    network = ScriptedNetwork(send={LIVE_NUMBER: SUCCEEDED})
    runtime.operators.live_adapters["mtn"] = network
    merchant = await make_merchant(runtime)
    url = await _gone_endpoint(client, merchant, livemode=True)
    live = merchant.headers(livemode=True)
    paid = await client.post(
        f"{API}/payments", json=momo_body(phone_number=LIVE_NUMBER), headers=live
    )
    payment = paid.json()["data"]
    assert payment["status"] == "succeeded", payment
    clock.advance(seconds=1)
    refunded = await client.post(
        f"{API}/payments/{payment['reference']}/refund", json={"amount": 300}, headers=live
    )
    refund = refunded.json()["data"]
    assert refund["status"] == "succeeded", refund
    await worker.drain()

    async with unit_of_work(runtime.sessionmaker) as session:
        seen = await details.payment(session, payment["identifier"])
    assert str(seen.payment.id) == payment["reference"]
    assert [r.reference for r in seen.refunds] == [refund["reference"]]
    trail = seen.trail
    assert _ledger(trail) == [
        ("payment", payment["reference"], [("operator", -1000), ("merchant", 1000)]),
        # MTN carried it out: from its clearing account to the connector account's wallet.
        ("carried", payment["reference"], [("connector", -1000), ("operator", 1000)]),
        ("refund", refund["reference"], [("merchant", -300), ("operator", 300)]),
        ("carried", refund["reference"], [("connector", 300), ("operator", -300)]),
    ]
    assert _sums(trail) == {0}
    assert [(op.operation.action, op.operation.subject_ref) for op in trail.operations] == [
        ("collect", payment["reference"]),
        ("refund", refund["reference"]),
    ]
    assert all(op.exchanges for op in trail.operations)
    assert _events(trail) == [
        ("payment.succeeded", payment["reference"]),
        ("refund.succeeded", refund["reference"]),
    ]
    for notified in trail.events:
        assert notified.delivery is not None
        assert notified.delivery.delivery.url == url
        [attempt] = notified.delivery.attempts
        assert attempt.number == 1 and attempt.response_code is None
        assert attempt.error is not None and attempt.error.startswith("Échec de connexion")


async def test_a_payout_a_refund_and_a_test_payment(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    seen = await traffic(client, runtime, clock)
    async with unit_of_work(runtime.sessionmaker) as session:
        payout = await details.payout(session, seen.payout["reference"])
        refund = await details.refund(session, seen.refund["reference"])
        failed = await details.payment(session, seen.refused["reference"])

    assert payout.payout.reference == seen.payout["reference"]
    [(kind, reference, postings)] = _ledger(payout.trail)
    assert (kind, reference) == ("payout", seen.payout["reference"])
    assert postings[0] == ("merchant", -(1000 + int(seen.payout["fee_amount"])))
    assert _sums(payout.trail) == {0}
    assert payout.trail.operations == []  # the test-mode simulator records no operation
    # No endpoint: the event is kept, with no delivery.
    [notified] = payout.trail.events
    assert (notified.event.type, notified.delivery) == ("payout.succeeded", None)

    assert refund.refund.reference == seen.refund["reference"]
    assert str(refund.payment.id) == seen.paid["reference"]
    assert _ledger(refund.trail) == [
        ("refund", seen.refund["reference"], [("merchant", -400), ("operator", 400)])
    ]
    assert _events(refund.trail) == [("refund.succeeded", seen.refund["reference"])]

    # Refused at once: no money moved, one event.
    assert failed.payment.status == "failed" and failed.refunds == []
    assert failed.trail.ledger == []
    assert _events(failed.trail) == [("payment.failed", seen.refused["reference"])]


async def test_a_cancelled_plan(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_penalty_percent="10")
    plan = await create_plan(client, merchant, target_amount=10_000)
    instalment = await paid_instalment(client, merchant, plan["reference"], "22997660000", 2000)
    assert (await cancel(client, merchant, plan["reference"])).status_code == 200
    await worker.drain()

    async with unit_of_work(runtime.sessionmaker) as session:
        seen = await details.plan(session, plan["reference"])
    assert str(seen.plan.id) == plan["reference"]
    assert [str(p.id) for p in seen.instalments] == [instalment]
    [plan_refund] = seen.plan_refunds
    assert seen.refunds == []
    kinds: Sequence[tuple[str, str | None]] = [
        (kind, reference) for kind, reference, _ in _ledger(seen.trail)
    ]
    assert kinds == [
        ("payment", instalment),
        ("plan_penalty", plan["reference"]),
        ("plan_refund", plan_refund.reference),
    ]
    assert _sums(seen.trail) == {0}
    assert _events(seen.trail) == [("payment.succeeded", instalment)]


@pytest.mark.parametrize("kind", ["payment", "plan", "payout", "refund"])
async def test_unknown_is_not_found(runtime: Runtime, kind: str) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        for reference in ("unknown", "00000000-0000-0000-0000-000000000000"):
            with pytest.raises(NotFound):
                await getattr(details, kind)(session, reference)
