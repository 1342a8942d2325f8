"""The operator call protocol (issue 9, part 2), through the API and the worker, with a
scripted operator network: record → commit → call → apply; an unknown outcome is never a
failure; status queries on a schedule, then review; callbacks are hints; a final status is
set once; a payout is re-credited only on a definitive failure."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.calls.builders import (
    FAILED,
    NOT_FOUND,
    SUCCEEDED,
    UNKNOWN,
    ScriptedNetwork,
    exchanges_of,
    operation_of,
    poll_after,
    polls_queued,
)
from tests.connectors.builders import cauri
from tests.payments.builders import merchant_available, pay
from tests.payouts.builders import PAYOUTS, top_up
from tests.support import MerchantKeys, assert_error, make_merchant, momo_body

NUMBER = "22997123456"
CALLBACKS = "/api/v1/operator-callbacks"


@pytest.fixture
def network(runtime: Runtime) -> ScriptedNetwork:
    """MTN Bénin opened in live mode through a network (not an offline adapter)."""
    scripted = ScriptedNetwork()
    runtime.operators.live_adapters["mtn"] = scripted
    return scripted


@pytest.fixture
async def merchant(runtime: Runtime) -> MerchantKeys:
    return await make_merchant(runtime)


async def live_payment(
    client: httpx.AsyncClient, merchant: MerchantKeys, number: str = NUMBER
) -> dict[str, Any]:
    response = await pay(client, merchant.headers(livemode=True), momo_body(phone_number=number))
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def status_of(client: httpx.AsyncClient, merchant: MerchantKeys, path: str) -> str:
    response = await client.get(f"/api/v1/{path}", headers=merchant.headers(livemode=True))
    status: str = response.json()["data"]["status"]
    return status


async def test_a_timeout_leaves_the_payment_pending_and_a_poll_settles_it(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    merchant: MerchantKeys,
) -> None:
    network.send[NUMBER] = UNKNOWN
    network.statuses[NUMBER] = [UNKNOWN, SUCCEEDED]
    payment = await live_payment(client, merchant)
    assert payment["status"] == "pending"
    operation = await operation_of(runtime, payment["reference"])
    assert operation["status"] == "pending" and operation["sent"] is True
    # Nothing is due before the first delay of the schedule (30 s).
    assert await poll_after(runtime, worker, 29) == 0
    await poll_after(runtime, worker, 1)  # unknown again: asked again at +120 s
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "pending"
    await poll_after(runtime, worker, 120)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert await exchanges_of(runtime, payment["reference"]) == [
        "collect",
        "collect_status",
        "collect_status",
    ]
    # Settled: the schedule stops, and nothing more is asked.
    assert await polls_queued(runtime) == 0
    assert len(network.sends()) == 1


async def test_an_outcome_unknown_for_seven_days_is_flagged_for_review_never_failed(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    merchant: MerchantKeys,
) -> None:
    network.send[NUMBER] = UNKNOWN
    network.statuses[NUMBER] = [UNKNOWN]
    payment = await live_payment(client, merchant)
    for delay in (30, 120, 600, 3600):
        await poll_after(runtime, worker, delay)
    polled = 4
    while await polls_queued(runtime):
        await poll_after(runtime, worker, 6 * 3600)
        polled += 1
    operation = await operation_of(runtime, payment["reference"])
    assert operation["review_required_at"] is not None
    assert operation["status"] == "pending"
    assert operation["polls"] == polled
    # Every 6 h after the first four, up to 7 days after the request.
    assert 4 + 7 * 4 - 2 <= polled <= 4 + 7 * 4
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "pending"


async def test_a_request_the_operator_never_got_is_sent_again_under_the_same_reference(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    merchant: MerchantKeys,
) -> None:
    network.send[NUMBER] = UNKNOWN
    network.statuses[NUMBER] = [NOT_FOUND, SUCCEEDED]
    payment = await live_payment(client, merchant)
    await poll_after(runtime, worker, 30)
    sends = network.sends("collect")
    assert [s.reference for s in sends] == [payment["reference"]] * 2
    await poll_after(runtime, worker, 120)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "succeeded"


async def test_a_request_is_never_sent_again_for_a_row_that_no_longer_waits(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    merchant: MerchantKeys,
) -> None:
    """Issue 23 (2): a status query that finds the operator never got a payout's request
    re-sends it only while the payout waits; a payout ended by anything else (here by hand,
    as the send job once did) is flagged for a person, never paid a second time."""
    await top_up(runtime, merchant.id, 5000, livemode=True)
    network.send[NUMBER] = UNKNOWN
    network.statuses[NUMBER] = [NOT_FOUND]
    payout = (await live_payout(client, merchant)).json()["data"]
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text("UPDATE payouts SET status = 'failed' WHERE reference = :reference"),
            {"reference": payout["reference"]},
        )
    await poll_after(runtime, worker, 30)
    assert len(network.sends("disburse")) == 1
    operation = await operation_of(runtime, payout["reference"])
    assert operation["status"] == "pending" and operation["review_required_at"] is not None


async def test_a_refusal_at_the_call_is_402_and_recorded_failed(
    client: httpx.AsyncClient, runtime: Runtime, network: ScriptedNetwork, merchant: MerchantKeys
) -> None:
    network.send[NUMBER] = FAILED
    response = await pay(client, merchant.headers(livemode=True), momo_body(phone_number=NUMBER))
    assert_error(response, 402, "payment_failed")
    payments = await client.get("/api/v1/payments", headers=merchant.headers(livemode=True))
    [payment] = payments.json()["data"]
    assert payment["status"] == "failed"
    assert (await operation_of(runtime, payment["reference"]))["reason"] == "payer_not_found"


async def test_a_forged_success_notice_is_only_a_hint(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    merchant: MerchantKeys,
) -> None:
    network.statuses[NUMBER] = [FAILED]
    payment = await live_payment(client, merchant)
    forged = json.dumps({"reference": payment["reference"], "status": "SUCCESSFUL"})
    response = await client.put(f"{CALLBACKS}/mtn", content=forged)
    assert response.status_code == 200, response.text
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "pending"
    # The hint queued a status query now; the operator's own answer decides.
    await worker.drain()
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    # Every notice is on record, with the exchanges.
    assert "callback" in await exchanges_of(runtime, payment["reference"])


async def test_notices_about_nothing_pending_change_nothing(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    merchant: MerchantKeys,
) -> None:
    network.send[NUMBER] = SUCCEEDED
    payment = await live_payment(client, merchant)
    assert payment["status"] == "succeeded"
    notice = json.dumps({"reference": payment["reference"], "status": "FAILED"})
    for _ in range(3):  # duplicates, late
        assert (await client.post(f"{CALLBACKS}/mtn", content=notice)).status_code == 200
    assert await worker.drain() == 0
    unknown = json.dumps({"reference": "4f6c43a4-3c59-4bb7-9a43-3f7e3d1e1d3b", "status": "X"})
    assert_error(await client.post(f"{CALLBACKS}/mtn", content=unknown), 404, "not_found")
    assert_error(await client.post(f"{CALLBACKS}/mtn", content=b"garbage"), 401, "unauthorized")
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000


async def test_answers_racing_for_one_operation_settle_it_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    merchant: MerchantKeys,
) -> None:
    network.statuses[NUMBER] = [SUCCEEDED]
    payment = await live_payment(client, merchant)
    notice = json.dumps({"reference": payment["reference"], "status": "SUCCESSFUL"})
    # Twenty hints queue twenty status queries, run at once with the scheduled one.
    await asyncio.gather(*(client.post(f"{CALLBACKS}/mtn", content=notice) for _ in range(20)))
    runtime.clock.advance(30)  # type: ignore[attr-defined]
    await asyncio.gather(*(worker.run_due() for _ in range(4)))
    await worker.drain()
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000


async def live_payout(
    client: httpx.AsyncClient, merchant: MerchantKeys, number: str = NUMBER
) -> httpx.Response:
    body = {"amount": 1000, "phone_number": number, "operator": "mtn"}
    return await client.post(PAYOUTS, json=body, headers=merchant.headers(livemode=True))


async def test_a_payout_whose_outcome_is_unknown_stays_debited_and_is_never_sent_twice(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    merchant: MerchantKeys,
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    network.send[NUMBER] = UNKNOWN  # accepted, then the connection timed out
    network.statuses[NUMBER] = [UNKNOWN, UNKNOWN, FAILED]
    response = await live_payout(client, merchant)
    assert response.status_code == 201, response.text
    payout = response.json()["data"]
    assert payout["status"] == "pending"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000
    await poll_after(runtime, worker, 30)
    await poll_after(runtime, worker, 120)
    # Still unknown: still debited, never re-credited by guess, never sent again.
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000
    assert len(network.sends("disburse")) == 1
    await poll_after(runtime, worker, 600)
    assert await status_of(client, merchant, f"payouts/{payout['reference']}") == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
    await poll_after(runtime, worker, 3600)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
    assert len(network.sends("disburse")) == 1


async def test_a_payout_refused_at_the_call_is_402_with_nothing_taken(
    client: httpx.AsyncClient, runtime: Runtime, network: ScriptedNetwork, merchant: MerchantKeys
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    network.send[NUMBER] = FAILED
    assert_error(await live_payout(client, merchant), 402, "payout_failed")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
    payouts = await client.get(PAYOUTS, headers=merchant.headers(livemode=True))
    assert [p["status"] for p in payouts.json()["data"]] == ["failed"]


async def test_no_lock_is_held_while_the_operator_is_asked(
    client: httpx.AsyncClient, runtime: Runtime, network: ScriptedNetwork, merchant: MerchantKeys
) -> None:
    """A payout in flight does not block another payout of the same balance."""
    await top_up(runtime, merchant.id, 5000, livemode=True)
    network.gates[NUMBER] = asyncio.Event()
    first = asyncio.create_task(live_payout(client, merchant))
    await asyncio.wait_for(network.asked.wait(), 10)
    # The first payout's request is held in flight; the second one's debit and call go
    # through meanwhile.
    second = await asyncio.wait_for(live_payout(client, merchant, "22997123457"), 10)
    assert second.status_code == 201
    assert not first.done()
    network.gates[NUMBER].set()
    assert (await first).status_code == 201
    assert await merchant_available(runtime, merchant.id, livemode=True) == 3000


async def test_a_refund_through_the_network_settles_by_its_polls(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    merchant: MerchantKeys,
) -> None:
    network.send[NUMBER] = SUCCEEDED
    payment = await live_payment(client, merchant)
    network.send[NUMBER] = UNKNOWN
    network.statuses[NUMBER] = [SUCCEEDED]
    response = await client.post(
        f"/api/v1/payments/{payment['reference']}/refund", headers=merchant.headers(True)
    )
    assert response.status_code in (200, 201), response.text
    refund = response.json()["data"]
    assert refund["status"] == "pending"
    [sent] = network.sends("refund")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    await poll_after(runtime, worker, 30)
    assert await status_of(client, merchant, f"refunds/{refund['reference']}") == "succeeded"
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "refunded"
    assert sent.reference != payment["reference"]


async def test_an_operation_under_review_is_listed_and_settled_by_hand_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    merchant: MerchantKeys,
    database_url: str,
) -> None:
    network.send[NUMBER] = UNKNOWN
    network.statuses[NUMBER] = [UNKNOWN]
    payment = await live_payment(client, merchant)
    while await polls_queued(runtime):
        await poll_after(runtime, worker, 6 * 3600)
    listed = await cauri(database_url, "exchanges", "review", "--json")
    [operation] = listed.json()
    assert operation["subject_ref"] == payment["reference"]
    assert operation["review_required_at"] is not None
    settled = await cauri(
        database_url, "exchanges", "settle", operation["id"], "succeeded",
        "--reason", "MTN support, ticket 4411: paid",
    )  # fmt: skip
    assert settled.exit_code == 0, settled.stderr
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert (await exchanges_of(runtime, payment["reference"]))[-1] == "manual_settlement"
    again = await cauri(
        database_url, "exchanges", "settle", operation["id"], "failed", "--reason", "oops"
    )
    assert again.exit_code == 1 and "conflict" in again.stderr
    assert (await cauri(database_url, "exchanges", "review", "--json")).json() == []
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
