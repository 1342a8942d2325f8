"""Issue 23, item 5: a failed live plan resolved from the console by a refund to a number.
The refund goes through an operator's network, whose call protocol commits the operation
before the request leaves (calls.engage): the audit entry is in that transaction, so it is
kept whenever the money was sent, and it says what was recorded (the refund asked for),
whatever the operator answered."""

from __future__ import annotations

import json
from typing import Any

import httpx
from sqlalchemy import text

from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.calls.builders import FAILED, SUCCEEDED, UNKNOWN, ScriptedNetwork
from tests.console.builders import ConsoleClient
from tests.console.test_actions import post_form, signed_in
from tests.plans.builders import PLANS, create_plan
from tests.plans.test_plan_refunds import live_escrow
from tests.support import MerchantKeys, ServerThread, make_merchant, momo_body

PAYER = "22997123456"
NEW_NUMBER = "22997654321"


async def live_failed_plan(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    network: ScriptedNetwork,
    *also: Runtime,
) -> tuple[MerchantKeys, str]:
    """A live plan paid 3,000 through `network` (this runtime's and `also`'s: a served
    console's), cancelled, whose refund the operator refused: the 3,000 are in its live
    escrow, the plan failed."""
    for served in (runtime, *also):
        served.operators.live_adapters["mtn"] = network
    merchant = await make_merchant(runtime)
    live = merchant.headers(livemode=True)
    reference = (await create_plan(client, merchant, livemode=True))["reference"]
    network.send[PAYER] = SUCCEEDED
    paid = await client.post(
        f"{PLANS}/{reference}/payments",
        json=momo_body(amount=3_000, phone_number=PAYER),
        headers=live,
    )
    assert paid.json()["data"]["status"] == "succeeded", paid.text
    network.send[PAYER] = FAILED
    assert (await client.post(f"{PLANS}/{reference}/cancel", json={}, headers=live)).is_success
    await worker.drain()
    fetched = await client.get(f"{PLANS}/{reference}", headers=live)
    assert fetched.json()["data"]["status"] == "failed"
    assert await live_escrow(runtime, merchant.id, reference) == 3_000
    return merchant, reference


def served(server: ServerThread) -> Runtime:
    assert server.runtime is not None
    return server.runtime


async def refund_entries(runtime: Runtime) -> list[dict[str, Any]]:
    async with runtime.sessionmaker() as session:
        rows = await session.execute(
            text(
                "SELECT actor_name, before, after FROM audit_log "
                "WHERE action = 'plan.refund_to' ORDER BY id"
            )
        )
        return [dict(row._mapping) for row in rows]


async def refund_to(console: ConsoleClient, reference: str) -> httpx.Response:
    page = f"/console/plans/{reference}"
    return await post_form(
        console,
        page,
        f"{page}/refund-to",
        {"phone_number": NEW_NUMBER, "operator": "mtn", "reason": "nouveau numéro du client"},
    )


async def test_a_live_refund_to_sent_through_the_network_keeps_its_audit_entry(
    client: httpx.AsyncClient,
    console: ConsoleClient,
    runtime: Runtime,
    server: ServerThread,
    worker: Worker,
) -> None:
    network = ScriptedNetwork()
    merchant, reference = await live_failed_plan(client, runtime, worker, network, served(server))
    network.send[NEW_NUMBER] = SUCCEEDED
    await signed_in(console, runtime, "finance", "awa")

    answer = await refund_to(console, reference)

    assert answer.status_code == 303, answer.text
    assert network.sends("disburse")[-1].phone_number == NEW_NUMBER
    assert await live_escrow(runtime, merchant.id, reference) == 0
    [entry] = await refund_entries(runtime)
    assert entry["actor_name"] == "awa@cauri.example"
    assert entry["before"]["status"] == "failed"
    assert entry["before"]["refund_phone_number"] == PAYER
    assert entry["after"]["refund_phone_number"] == NEW_NUMBER
    assert entry["after"]["refund"]["amount"] == 3_000


async def test_a_live_refund_to_the_operator_refuses_or_leaves_unanswered_is_recorded(
    client: httpx.AsyncClient,
    console: ConsoleClient,
    runtime: Runtime,
    server: ServerThread,
    worker: Worker,
) -> None:
    """The entry says what was recorded before the call (the refund asked for), not what
    the operator answered: the refund's own row tells that."""
    network = ScriptedNetwork()
    merchant, reference = await live_failed_plan(client, runtime, worker, network, served(server))
    await signed_in(console, runtime, "finance", "awa")

    network.send[NEW_NUMBER] = FAILED
    refused = await refund_to(console, reference)
    assert refused.status_code == 303, refused.text
    assert await live_escrow(runtime, merchant.id, reference) == 3_000  # back in escrow
    network.send[NEW_NUMBER] = UNKNOWN
    unanswered = await refund_to(console, reference)
    assert unanswered.status_code == 303, unanswered.text
    assert await live_escrow(runtime, merchant.id, reference) == 0  # sent, answer awaited

    entries = await refund_entries(runtime)
    assert len(entries) == 2
    refunds = [entry["after"]["refund"] for entry in entries]
    assert [refund["status"] for refund in refunds] == ["pending", "pending"]
    assert refunds[0]["reference"] != refunds[1]["reference"]
    assert json.dumps(entries).count(NEW_NUMBER) >= 2
