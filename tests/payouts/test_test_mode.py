"""Test mode: the last-four-digits table, events, the test helpers (spec: Test mode for
payouts; DESIGN: test helpers)."""

from __future__ import annotations

import httpx

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import events_of, merchant_available
from tests.payouts.builders import (
    FAILS_LATER,
    PAYOUTS,
    REFUSED,
    STAYS_PENDING,
    SUCCEEDS,
    SUCCEEDS_LATER,
    create,
    ledger_postings_for,
    set_limits,
    top_up,
)
from tests.support import assert_error, make_merchant


async def test_0000_succeeds_at_once_with_its_event(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000)
    response = await create(
        client,
        merchant.headers(),
        amount=1500,
        beneficiary_name="Koffi",
        reason="Salaire",
        metadata={"order": "A-1", "items": [1, 2]},
    )
    assert response.status_code == 201, response.text
    payout = response.json()["data"]
    assert payout["reference"].startswith("pyo_")
    assert payout["status"] == "succeeded"
    assert payout["amount"] == 1500
    assert payout["fee_amount"] == 0
    assert payout["total_debited"] == 1500
    assert payout["currency"] == "XOF"
    assert payout["operator"] == "mtn"
    assert payout["phone_number"] == "2299700****"
    assert payout["beneficiary_name"] == "Koffi"
    assert payout["reason"] == "Salaire"
    assert payout["metadata"] == {"order": "A-1", "items": [1, 2]}
    assert payout["livemode"] is False
    assert payout["completed_at"] is not None
    assert await merchant_available(runtime, merchant.id) == 3500
    assert await events_of(runtime, payout["reference"]) == [("payout.succeeded", payout)]
    fetched = await client.get(f"{PAYOUTS}/{payout['reference']}", headers=merchant.headers())
    assert fetched.json()["data"] == payout


async def test_0001_is_refused_recorded_failed_and_nothing_taken(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000)
    response = await create(client, merchant.headers(), phone_number=REFUSED, external_id="r-1")
    assert_error(response, 402, "payout_failed")
    failed = (await client.get(f"{PAYOUTS}/r-1", headers=merchant.headers())).json()["data"]
    assert failed["status"] == "failed"
    assert response.json()["error"]["reference"] == failed["reference"]
    assert failed["completed_at"] is not None
    assert await merchant_available(runtime, merchant.id) == 5000
    # Not even a debit and its reversal: the refusal left no trace in the ledger.
    assert await ledger_postings_for(runtime, failed["reference"]) == 0
    assert [kind for kind, _ in await events_of(runtime, failed["reference"])] == ["payout.failed"]


async def test_0002_stays_pending_and_debited(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000)
    response = await create(client, merchant.headers(), phone_number=STAYS_PENDING)
    assert response.status_code == 201
    payout = response.json()["data"]
    assert payout["status"] == "pending"
    assert payout["completed_at"] is None
    clock.advance(3600)
    await worker.drain()
    fetched = await client.get(f"{PAYOUTS}/{payout['reference']}", headers=merchant.headers())
    assert fetched.json()["data"]["status"] == "pending"
    assert await merchant_available(runtime, merchant.id) == 4000
    assert await events_of(runtime, payout["reference"]) == []


async def test_0003_fails_after_the_delay_and_is_re_credited(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000)
    response = await create(client, merchant.headers(), phone_number=FAILS_LATER)
    payout = response.json()["data"]
    assert payout["status"] == "pending"
    assert await merchant_available(runtime, merchant.id) == 4000
    clock.advance(runtime.settings.test_settle_delay - 1)
    await worker.drain()
    assert await merchant_available(runtime, merchant.id) == 4000
    clock.advance(1)
    await worker.drain()
    failed = (
        await client.get(f"{PAYOUTS}/{payout['reference']}", headers=merchant.headers())
    ).json()["data"]
    assert failed["status"] == "failed"
    assert failed["completed_at"] is not None
    assert await merchant_available(runtime, merchant.id) == 5000
    assert await events_of(runtime, payout["reference"]) == [("payout.failed", failed)]


async def test_other_numbers_succeed_after_the_delay(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000)
    payout = (await create(client, merchant.headers(), phone_number=SUCCEEDS_LATER)).json()["data"]
    assert payout["status"] == "pending"
    clock.advance(runtime.settings.test_settle_delay)
    await worker.drain()
    succeeded = (
        await client.get(f"{PAYOUTS}/{payout['reference']}", headers=merchant.headers())
    ).json()["data"]
    assert succeeded["status"] == "succeeded"
    assert await merchant_available(runtime, merchant.id) == 4000
    assert await events_of(runtime, payout["reference"]) == [("payout.succeeded", succeeded)]


async def test_helpers_decide_a_pending_payout(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000)
    first = (await create(client, merchant.headers(), phone_number=STAYS_PENDING)).json()["data"]
    second = (await create(client, merchant.headers(), phone_number=STAYS_PENDING)).json()["data"]
    helpers = "/api/v1/test-helpers/payouts"

    succeeded = await client.post(
        f"{helpers}/{first['reference']}/succeed", headers=merchant.headers()
    )
    assert succeeded.status_code == 200, succeeded.text
    assert succeeded.json()["data"]["status"] == "succeeded"
    failed = await client.post(f"{helpers}/{second['reference']}/fail", headers=merchant.headers())
    assert failed.json()["data"]["status"] == "failed"
    # The failed one was re-credited; the succeeded one stays taken.
    assert await merchant_available(runtime, merchant.id) == 4000

    again = await client.post(f"{helpers}/{first['reference']}/fail", headers=merchant.headers())
    assert_error(again, 409, "conflict")
    live = await client.post(
        f"{helpers}/{first['reference']}/succeed", headers=merchant.headers(livemode=True)
    )
    assert_error(live, 404, "not_found")
    unknown = await client.post(f"{helpers}/pyo_unknown/succeed", headers=merchant.headers())
    assert_error(unknown, 404, "not_found")
    assert [k for k, _ in await events_of(runtime, second["reference"])] == ["payout.failed"]


async def test_caps_and_approval_never_apply_in_test_mode(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 100_000)
    await set_limits(runtime, merchant.id, per_payout=100, daily=150, approval_threshold=50)
    for _ in range(3):
        response = await create(client, merchant.headers(), amount=20_000, phone_number=SUCCEEDS)
        assert response.status_code == 201, response.text
        assert response.json()["data"]["status"] == "succeeded"
    assert await merchant_available(runtime, merchant.id) == 40_000
