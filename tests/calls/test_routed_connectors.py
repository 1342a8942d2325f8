"""The call protocol through a connector account the staff configured (a route in the
database, not an in-process adapter): the operation names the account, its status queries
and callbacks find it by that name, and a route changed meanwhile does not move a request
already sent."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import text

from cauri.kit.db import unit_of_work
from cauri.operators.protocol import Outcome
from cauri.payouts.service import payouts
from cauri.runtime import Runtime
from cauri.staff.overview import overview
from cauri.worker.runner import Worker
from tests.calls.builders import exchanges_of, operation_of, poll_after
from tests.connectors.builders import Builds, add_fake, registered_kinds, set_route
from tests.payments.builders import events_of, merchant_available, pay
from tests.payouts.builders import PAYOUTS, approve, set_limits, top_up
from tests.support import make_merchant, momo_body, scalar


@pytest.fixture
def builds() -> Iterator[Builds]:
    yield from registered_kinds()


async def test_a_routed_payment_is_polled_and_called_back_through_its_account(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, builds: Builds
) -> None:
    merchant = await make_merchant(runtime)
    await add_fake(runtime, "fake-bj")
    await add_fake(runtime, "fake-other")
    await set_route(runtime, "mtn", collect="fake-bj")
    response = await pay(client, merchant.headers(livemode=True), momo_body(amount=1000))
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    [connector] = builds.made
    connector.outcome = Outcome.PENDING
    assert payment["status"] == "succeeded"  # the fake answered at once
    operation = await operation_of(runtime, payment["reference"])
    assert operation["connector"] == "fake-bj"
    assert await exchanges_of(runtime, payment["reference"]) == []  # the fake records none

    # A second payment stays pending; the route then moves to another account.
    second = (await pay(client, merchant.headers(True), momo_body(amount=500))).json()["data"]
    assert second["status"] == "pending"
    await set_route(runtime, "mtn", collect="fake-other")
    connector.outcome = Outcome.SUCCEEDED
    notice = json.dumps({"reference": second["reference"], "status": "succeeded"})
    answer = await client.post(
        "/api/v1/operator-callbacks/fake-bj",
        content=notice,
        headers={"X-Operator-Secret": "operator-shared-secret"},
    )
    assert answer.status_code == 200, answer.text
    # The notice is a hint: its account, not today's route, is asked, and settles it; the
    # scheduled query then finds it settled.
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    await poll_after(runtime, worker, 0)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1500
    await poll_after(runtime, worker, 30)
    assert (await operation_of(runtime, second["reference"]))["status"] == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1500


async def _held_payout_sent_and_pending(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, builds: Builds
) -> tuple[str, str]:
    """A live payout held for approval, approved and sent through `fake-bj`, which accepted
    it and has not said more: (merchant id, payout reference)."""
    merchant = await make_merchant(runtime)
    await add_fake(runtime, "fake-bj")
    await set_route(runtime, "mtn", disburse="fake-bj")
    async with runtime.sessionmaker() as session:
        await runtime.operators.route(session, "mtn", "disburse", True)
    [connector] = builds.made
    connector.outcome = Outcome.PENDING
    await top_up(runtime, merchant.id, 8000, livemode=True)
    await set_limits(runtime, merchant.id, approval_threshold=10)
    body = {"amount": 5000, "phone_number": "22997123456", "operator": "mtn"}
    response = await client.post(PAYOUTS, json=body, headers=merchant.headers(True))
    held = response.json()["data"]
    assert held["awaiting_approval"], response.text
    await approve(runtime, held["reference"])
    await worker.drain()
    assert (await operation_of(runtime, held["reference"]))["status"] == "pending"
    return merchant.id, held["reference"]


async def _send_job_runs_again(runtime: Runtime, reference: str) -> None:
    """The send job run a second time (its worker killed after the operator accepted)."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await payouts.send_approved(session, runtime, reference)


async def test_an_approved_payout_sent_then_unrouted_is_never_failed_nor_re_credited(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, builds: Builds
) -> None:
    """Issue 23 (2): the send job re-run after the operator accepted, with the route gone,
    must not fail the payout and give the money back while the transfer is on its way."""
    merchant_id, reference = await _held_payout_sent_and_pending(client, runtime, worker, builds)
    await set_route(runtime, "mtn", disburse=None)
    await _send_job_runs_again(runtime, reference)
    assert await _payout_status(runtime, reference) == "pending"
    assert await merchant_available(runtime, merchant_id, livemode=True) == 3000
    # The operation's own connector, not a route, brings the answer.
    builds.made[0].outcome = Outcome.SUCCEEDED
    await poll_after(runtime, worker, 30)
    assert await _payout_status(runtime, reference) == "succeeded"
    assert await merchant_available(runtime, merchant_id, livemode=True) == 3000
    assert [kind for kind, _ in await events_of(runtime, reference)] == ["payout.succeeded"]


async def test_an_operation_whose_connector_cannot_be_built_stays_pending_and_is_flagged(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, builds: Builds
) -> None:
    """A worker that cannot build the operation's connector (no CAURI_SECRET_KEY, …) leaves
    the payout pending and debited, and tells a person; the operation's answer ends it once
    the connector is back."""
    merchant_id, reference = await _held_payout_sent_and_pending(client, runtime, worker, builds)
    builds.fail = RuntimeError("no CAURI_SECRET_KEY on this worker")
    await _touch_account(runtime, "fake-bj")
    await _send_job_runs_again(runtime, reference)
    await poll_after(runtime, worker, 30)
    operation = await operation_of(runtime, reference)
    assert operation["status"] == "pending" and operation["review_required_at"] is not None
    assert await merchant_available(runtime, merchant_id, livemode=True) == 3000
    async with runtime.sessionmaker() as session:
        shown = await overview(session, runtime)
    assert [o.subject_ref for o in shown.under_review.rows] == [reference]
    builds.fail = None
    await _touch_account(runtime, "fake-bj")
    await poll_after(runtime, worker, 120)
    builds.made[-1].outcome = Outcome.SUCCEEDED
    await poll_after(runtime, worker, 600)
    assert (await operation_of(runtime, reference))["status"] == "succeeded"
    assert await merchant_available(runtime, merchant_id, livemode=True) == 3000


async def _touch_account(runtime: Runtime, name: str) -> None:
    """A change of the account: the registry builds its connector again."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text(
                "UPDATE connector_accounts SET updated_at = updated_at + interval '1 second' "
                "WHERE name = :name"
            ),
            {"name": name},
        )


async def _payout_status(runtime: Runtime, reference: str) -> str:
    status: str = await scalar(
        runtime, "SELECT status FROM payouts WHERE reference = :r", r=reference
    )
    return status
