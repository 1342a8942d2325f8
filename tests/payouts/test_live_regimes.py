"""Live mode: the operator adapter, third-party caps and the approval hold (spec: Payouts,
Payout state table, Limits; DESIGN: payouts held for approval)."""

from __future__ import annotations

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.kit.errors import Conflict, InsufficientFunds, NotFound
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import events_of, merchant_available
from tests.payouts.builders import (
    BALANCE,
    PAYOUTS,
    REFUSED,
    approve,
    create,
    ledger_postings_for,
    live_operator,
    reject,
    set_limits,
    set_payout_account,
    top_up,
)
from tests.support import assert_error, make_merchant

LIVE = True


async def _status(client: httpx.AsyncClient, headers: dict[str, str], reference: str) -> str:
    response = await client.get(f"{PAYOUTS}/{reference}", headers=headers)
    status: str = response.json()["data"]["status"]
    return status


async def test_sent_through_the_live_adapter(client: httpx.AsyncClient, runtime: Runtime) -> None:
    fake = live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000, livemode=LIVE)
    response = await create(client, merchant.headers(LIVE), amount=1200, reason="Prime")
    assert response.status_code == 201, response.text
    payout = response.json()["data"]
    assert payout["livemode"] is True
    assert payout["status"] == "succeeded"
    [sent] = fake.disbursed
    assert (sent.reference, sent.amount, sent.phone_number, sent.reason) == (
        payout["reference"],
        1200,
        "22997000000",
        "Prime",
    )
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 3800
    assert await merchant_available(runtime, merchant.id) == 0


async def test_refused_by_the_live_operator_takes_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000, livemode=LIVE)
    response = await create(client, merchant.headers(LIVE), phone_number=REFUSED, external_id="x")
    assert_error(response, 402, "payout_failed")
    assert await _status(client, merchant.headers(LIVE), "x") == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 5000


async def test_the_balance_is_checked_before_the_operator(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """DESIGN: request validity, payout account and caps, balance, then the operator."""
    merchant = await make_merchant(runtime)
    headers = merchant.headers(LIVE)
    await top_up(runtime, merchant.id, 500, livemode=LIVE)
    # No live operator at all, and a balance that does not cover the payout.
    response = await create(client, headers, amount=1000, external_id="uncovered")
    assert_error(response, 402, "insufficient_funds")
    assert_error(await client.get(f"{PAYOUTS}/uncovered", headers=headers), 404, "not_found")
    # With the balance, the missing operator is what refuses it.
    await top_up(runtime, merchant.id, 500, livemode=LIVE)
    assert_error(await create(client, headers, amount=1000), 402, "payout_failed")
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 1000


async def test_no_adapter_is_payout_failed_with_nothing_taken(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000, livemode=LIVE)
    response = await create(client, merchant.headers(LIVE), external_id="no-adapter")
    assert_error(response, 402, "payout_failed")
    failed = (await client.get(f"{PAYOUTS}/no-adapter", headers=merchant.headers(LIVE))).json()
    assert failed["data"]["status"] == "failed"
    assert await ledger_postings_for(runtime, failed["data"]["reference"]) == 0
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 5000


async def test_above_threshold_without_a_route_is_refused_at_once_not_held(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Issue 27, friction 4: held, it would have failed only once approved, after the
    console said it was sent. Refused now, as below the threshold."""
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 50_000, livemode=LIVE)
    await set_limits(runtime, merchant.id, approval_threshold=100)
    response = await create(client, merchant.headers(LIVE), amount=5000, external_id="no-route")
    refused = assert_error(response, 402, "payout_failed")
    failed = (await client.get(f"{PAYOUTS}/no-route", headers=merchant.headers(LIVE))).json()
    assert failed["data"]["reference"] == refused["reference"]
    assert (failed["data"]["status"], failed["data"]["awaiting_approval"]) == ("failed", False)
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 50_000


async def test_per_payout_cap(client: httpx.AsyncClient, runtime: Runtime) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 50_000, livemode=LIVE)
    await set_limits(runtime, merchant.id, per_payout=5000)
    assert_error(
        await create(client, merchant.headers(LIVE), amount=5001), 403, "payout_limit_exceeded"
    )
    assert (await create(client, merchant.headers(LIVE), amount=5000)).status_code == 201
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 45_000


async def test_daily_cap_counts_24_hours_of_non_failed_third_party_payouts(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    headers = merchant.headers(LIVE)
    await top_up(runtime, merchant.id, 100_000, livemode=LIVE)
    await set_limits(runtime, merchant.id, daily=10_000)
    await set_payout_account(runtime, merchant.id, "22961000000", validated=True)

    assert (await create(client, headers, amount=6000)).status_code == 201
    clock.advance(hours=12)
    # A failed payout does not count toward the cap.
    assert_error(
        await create(client, headers, amount=4000, phone_number=REFUSED), 402, "payout_failed"
    )
    assert (await create(client, headers, amount=4000)).status_code == 201
    assert_error(await create(client, headers, amount=10), 403, "payout_limit_exceeded")
    # The merchant's own account has no cap beyond the balance.
    own = await client.post(PAYOUTS, json={"amount": 20_000}, headers=headers)
    assert own.status_code == 201, own.text
    # 24 hours after the first, its amount leaves the window.
    clock.advance(hours=12, seconds=1)
    assert (await create(client, headers, amount=6000)).status_code == 201
    assert_error(await create(client, headers, amount=10), 403, "payout_limit_exceeded")
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 100_000 - 36_000


async def test_above_threshold_is_held_until_approved(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    fake = live_operator(runtime)
    merchant = await make_merchant(runtime)
    headers = merchant.headers(LIVE)
    await top_up(runtime, merchant.id, 50_000, livemode=LIVE)
    await set_limits(runtime, merchant.id, approval_threshold=10_000)
    assert (await create(client, headers, amount=10_000)).json()["data"]["status"] == "succeeded"

    response = await create(client, headers, amount=10_001, external_id="held")
    assert response.status_code == 201, response.text
    held = response.json()["data"]
    assert (held["status"], held["awaiting_approval"]) == ("pending", True)
    assert len(fake.disbursed) == 1
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 40_000
    # Held: not debited, yet counted as a payout on its way.
    [row] = (await client.get(BALANCE, headers=headers)).json()["data"]
    assert (row["available"], row["pending_payouts"]) == (40_000, 10_001)
    await worker.drain()
    assert await _status(client, headers, "held") == "pending"

    await approve(runtime, held["reference"])
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 40_000 - 10_001
    [row] = (await client.get(BALANCE, headers=headers)).json()["data"]
    assert (row["available"], row["pending_payouts"]) == (40_000 - 10_001, 10_001)
    approved = (await client.get(f"{PAYOUTS}/held", headers=headers)).json()["data"]
    assert (approved["status"], approved["awaiting_approval"]) == ("pending", False)
    await worker.drain()
    assert fake.disbursed[-1].reference == held["reference"]
    assert await _status(client, headers, "held") == "succeeded"
    assert [k for k, _ in await events_of(runtime, held["reference"])] == ["payout.succeeded"]
    with pytest.raises(Conflict):
        await approve(runtime, held["reference"])


async def test_rejected_hold_fails_with_nothing_debited(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    fake = live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 50_000, livemode=LIVE)
    await set_limits(runtime, merchant.id, approval_threshold=100)
    held = (await create(client, merchant.headers(LIVE), amount=500)).json()["data"]
    await reject(runtime, held["reference"])
    assert await _status(client, merchant.headers(LIVE), held["reference"]) == "failed"
    assert fake.disbursed == []
    assert await ledger_postings_for(runtime, held["reference"]) == 0
    [(kind, data)] = await events_of(runtime, held["reference"])
    assert (kind, data["status"]) == ("payout.failed", "failed")
    with pytest.raises(Conflict):
        await approve(runtime, held["reference"])
    with pytest.raises(NotFound):
        await reject(runtime, "pyo_unknown")


async def test_approval_is_refused_when_the_balance_no_longer_covers_it(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    headers = merchant.headers(LIVE)
    await top_up(runtime, merchant.id, 8000, livemode=LIVE)
    await set_limits(runtime, merchant.id, approval_threshold=5000)
    held = (await create(client, headers, amount=6000)).json()["data"]
    await create(client, headers, amount=4000)
    with pytest.raises(InsufficientFunds):
        await approve(runtime, held["reference"])
    assert await _status(client, headers, held["reference"]) == "pending"
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 4000
    await top_up(runtime, merchant.id, 2000, livemode=LIVE)
    await approve(runtime, held["reference"])
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 0


async def test_approved_payout_without_an_adapter_fails_and_is_re_credited(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 8000, livemode=LIVE)
    await set_limits(runtime, merchant.id, approval_threshold=10)
    held = (await create(client, merchant.headers(LIVE), amount=5000)).json()["data"]
    await approve(runtime, held["reference"])
    runtime.operators.live_adapters.clear()
    await worker.drain()
    assert await _status(client, merchant.headers(LIVE), held["reference"]) == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 8000
    kinds = [k for k, _ in await events_of(runtime, held["reference"])]
    assert kinds == ["payout.failed"]


async def test_held_payouts_count_toward_the_daily_cap(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 50_000, livemode=LIVE)
    await set_limits(runtime, merchant.id, daily=10_000, approval_threshold=1000)
    assert (await create(client, merchant.headers(LIVE), amount=9000)).status_code == 201
    assert_error(
        await create(client, merchant.headers(LIVE), amount=1001), 403, "payout_limit_exceeded"
    )
