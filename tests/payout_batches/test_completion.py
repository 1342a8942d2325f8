"""A payout batch completes once, whatever ends its last payout and however many end at once;
a rerun of its job, or two at once, never pays an item twice; live items follow the live
rules (caps, approval) and complete the batch when approved (issue 28)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import httpx

from cauri.kit.db import unit_of_work
from cauri.merchants.caller import Caller
from cauri.merchants.service import merchants
from cauri.payout_batches.service import payout_batches
from cauri.payouts.schemas import PayoutCreate
from cauri.payouts.service import payouts
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import merchant_available
from tests.payout_batches.builders import batch_events, item, payouts_of, read, send
from tests.payouts.builders import (
    PAYOUTS,
    STAYS_PENDING,
    approve,
    live_operator,
    set_limits,
    top_up,
)
from tests.support import make_merchant

LIVE = True


async def _complete(runtime: Runtime, reference: str) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        await payout_batches.complete_if_final(session, runtime, reference)


async def _process(runtime: Runtime, reference: str) -> None:
    """The batch's job, as the worker runs it: in a unit of work of its own."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await payout_batches.process(session, runtime, reference)


async def test_two_payouts_ending_at_once_complete_the_batch_once(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    items = [item(n, phone_number=STAYS_PENDING) for n in range(3)]
    reference = (await send(client, merchant.headers(), items)).json()["data"]["reference"]
    await worker.drain()
    batch = await read(client, merchant.headers(), reference)
    assert batch["counts"]["pending"] == 3
    first, *others = [entry["payout"] for entry in batch["items"]]
    helper = "/api/v1/test-helpers/payouts/{}/{}"
    await client.post(helper.format(first, "fail"), headers=merchant.headers())
    await worker.drain()
    assert (await read(client, merchant.headers(), reference))["status"] == "processing"
    # The last two end at once, each request in its own session and transaction.
    decided = await asyncio.gather(
        *(client.post(helper.format(p, "succeed"), headers=merchant.headers()) for p in others)
    )
    assert [answer.status_code for answer in decided] == [200, 200]
    # Their completion checks, and more, at once in separate sessions: one completes it.
    await asyncio.gather(*(_complete(runtime, reference) for _ in range(4)))
    await worker.drain()
    batch = await read(client, merchant.headers(), reference)
    assert batch["status"] == "completed"
    assert (batch["counts"]["succeeded"], batch["counts"]["failed"]) == (2, 1)
    assert len(await batch_events(runtime, reference)) == 1
    assert await merchant_available(runtime, merchant.id) == 8000


async def test_the_worker_s_own_checks_at_once_emit_once(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    items = [item(n, phone_number=STAYS_PENDING) for n in range(4)]
    reference = (await send(client, merchant.headers(), items)).json()["data"]["reference"]
    await worker.drain()
    batch = await read(client, merchant.headers(), reference)
    helper = "/api/v1/test-helpers/payouts/{}/succeed"
    await asyncio.gather(
        *(
            client.post(helper.format(entry["payout"]), headers=merchant.headers())
            for entry in batch["items"]
        )
    )
    await worker.drain()
    assert (await read(client, merchant.headers(), reference))["status"] == "completed"
    assert len(await batch_events(runtime, reference)) == 1


async def test_a_rerun_or_two_runs_at_once_pay_each_item_once(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 100_000)
    items = [item(n) for n in range(20)]
    reference = (await send(client, merchant.headers(), items)).json()["data"]["reference"]
    # Two runs of the batch's job at once (a lease lost while the first still runs).
    await asyncio.gather(_process(runtime, reference), _process(runtime, reference))
    # Then the worker's own run, and one more: nothing left to make.
    await worker.drain()
    await _process(runtime, reference)
    batch = await read(client, merchant.headers(), reference)
    assert batch["status"] == "completed"
    assert batch["counts"]["succeeded"] == 20
    made = await payouts_of(runtime, merchant.id)
    assert sorted(external_id or "" for external_id, _ in made) == sorted(
        f"item-{n}" for n in range(20)
    )
    assert await merchant_available(runtime, merchant.id) == 80_000
    assert len(await batch_events(runtime, reference)) == 1


async def test_an_item_made_before_a_crash_is_found_again_not_paid_twice(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    items = [item(n) for n in range(3)]
    reference = (await send(client, merchant.headers(), items)).json()["data"]["reference"]
    # What a crash leaves after an item's payout committed and before the item was recorded
    # (a live payout commits before its operator is called): the payout alone.
    async with unit_of_work(runtime.sessionmaker) as session:
        body = PayoutCreate.model_validate(item(1) | {"amount": Decimal(1000)})
        made, created = await payouts.create(
            session, runtime, Caller(merchant.id, False), body, batch=reference
        )
        assert created
    await worker.drain()
    batch = await read(client, merchant.headers(), reference)
    assert batch["status"] == "completed"
    assert [entry["payout"] is not None for entry in batch["items"]] == [True] * 3
    assert batch["items"][1]["payout"] == made.reference
    assert len(await payouts_of(runtime, merchant.id)) == 3
    assert await merchant_available(runtime, merchant.id) == 7000


async def test_an_item_naming_a_payout_already_made_waits_for_it(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    """As a replay of POST /payouts: the payout made then, and its end completes the batch."""
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    earlier = await client.post(
        PAYOUTS, json=item(0, phone_number=STAYS_PENDING), headers=merchant.headers()
    )
    assert earlier.status_code == 201
    pending = earlier.json()["data"]["reference"]
    reference = (await send(client, merchant.headers(), [item(0), item(1)])).json()["data"][
        "reference"
    ]
    await worker.drain()
    batch = await read(client, merchant.headers(), reference)
    assert batch["items"][0]["payout"] == pending
    assert batch["status"] == "processing"
    await client.post(f"/api/v1/test-helpers/payouts/{pending}/succeed", headers=merchant.headers())
    await worker.drain()
    assert (await read(client, merchant.headers(), reference))["status"] == "completed"
    assert len(await payouts_of(runtime, merchant.id)) == 2
    assert await merchant_available(runtime, merchant.id) == 8000


async def test_live_items_follow_caps_and_approval_and_complete_once_approved(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    fake = live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 20_000, livemode=LIVE)
    await set_limits(runtime, merchant.id, per_payout=5000, approval_threshold=1500)
    items = [item(0, amount=1000), item(1, amount=2000), item(2, amount=6000), item(3)]
    response = await send(client, merchant.headers(LIVE), items)
    assert response.status_code == 201, response.text
    reference = response.json()["data"]["reference"]
    assert response.json()["data"]["livemode"] is True
    await worker.drain()
    batch = await read(client, merchant.headers(LIVE), reference)
    assert batch["status"] == "processing"
    assert batch["counts"] | {"total": 4} == {
        "total": 4,
        "queued": 0,
        "refused": 1,
        "pending": 1,
        "succeeded": 2,
        "failed": 0,
    }
    assert batch["items"][2]["error"]["code"] == "payout_limit_exceeded"
    held = batch["items"][1]["payout"]
    shown = await client.get(f"{PAYOUTS}/{held}", headers=merchant.headers(LIVE))
    assert shown.json()["data"]["awaiting_approval"] is True
    assert len(fake.disbursed) == 2
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 18_000
    await approve(runtime, held)
    await worker.drain()
    batch = await read(client, merchant.headers(LIVE), reference)
    assert batch["status"] == "completed"
    assert batch["counts"]["succeeded"] == 3
    assert len(await batch_events(runtime, reference)) == 1
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 16_000


async def test_a_live_account_suspended_mid_batch_pays_no_more(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 20_000, livemode=LIVE)
    reference = (await send(client, merchant.headers(LIVE), [item(0), item(1)])).json()["data"][
        "reference"
    ]
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_status(session, merchant.id, "suspended")
    await worker.drain()
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_status(session, merchant.id, "active")
    batch = await read(client, merchant.headers(LIVE), reference)
    assert [entry["error"]["code"] for entry in batch["items"]] == ["merchant_inactive"] * 2
    assert batch["status"] == "completed"
    assert await merchant_available(runtime, merchant.id, livemode=LIVE) == 20_000


async def test_an_item_sent_before_a_crash_stays_its_payout_after_a_suspension(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    """Review finding: a rerun checked the merchant's status before finding the payout an
    earlier run had sent, and recorded the item refused while its payout went on."""
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 20_000, livemode=LIVE)
    reference = (await send(client, merchant.headers(LIVE), [item(0), item(1)])).json()["data"][
        "reference"
    ]
    # The first run sent item 0's payout and died before recording the item; then the
    # account was suspended.
    async with unit_of_work(runtime.sessionmaker) as session:
        body = PayoutCreate.model_validate(item(0) | {"amount": Decimal(1000)})
        sent, _ = await payouts.create(
            session, runtime, Caller(merchant.id, LIVE), body, batch=reference
        )
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_status(session, merchant.id, "suspended")
    await worker.drain()
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_status(session, merchant.id, "active")
    batch = await read(client, merchant.headers(LIVE), reference)
    assert batch["items"][0] == {
        "external_id": item(0)["external_id"],
        "payout": sent.reference,
        "error": None,
    }
    assert batch["items"][1]["error"]["code"] == "merchant_inactive"
