"""Payout batches over HTTP: validated item by item, made in order by the worker, each an
ordinary payout; counts, replay, completion and its event (issue 28)."""

from __future__ import annotations

import asyncio

import httpx

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import merchant_available
from tests.payout_batches.builders import BATCHES, batch_events, item, payouts_of, read, send
from tests.payouts.builders import FAILS_LATER, REFUSED, STAYS_PENDING, SUCCEEDS_LATER, top_up
from tests.support import assert_error, make_merchant


async def test_good_and_bad_items_each_reported_the_others_paid(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 100_000)
    items = [
        item(0),
        item(1, amount=5),  # below the payout bounds: refused when made, as POST /payouts
        {"amount": 1000, "operator": "mtn", "phone_number": "22997000000"},  # no external_id
        item(3, amount="mille"),  # the schema refuses it at once
        item(0, amount=2000),  # external_id of item 0 again
        item(5, operator="nope"),
        "not an object",
        item(7, phone_number=REFUSED),  # the operator refuses it: a payout kept failed
        item(8, surprise=True),
        item(9, amount=2500),
    ]
    response = await send(client, merchant.headers(), items)
    assert response.status_code == 201, response.text
    batch = response.json()["data"]
    assert batch["reference"].startswith("pyb_")
    assert batch["external_id"] == "batch-1"
    assert batch["status"] == "processing"
    assert batch["livemode"] is False
    assert batch["completed_at"] is None
    assert batch["counts"] == {
        "total": 10,
        "queued": 5,
        "refused": 5,
        "pending": 0,
        "succeeded": 0,
        "failed": 0,
    }
    shown = batch["items"]
    assert [entry["external_id"] for entry in shown] == [
        "item-0",
        "item-1",
        None,
        "item-3",
        "item-0",
        "item-5",
        None,
        "item-7",
        "item-8",
        "item-9",
    ]
    assert shown[2]["error"]["code"] == "invalid_request"
    assert "external_id" in shown[2]["error"]["details"]
    assert "amount" in shown[3]["error"]["details"]
    assert "external_id" in shown[4]["error"]["details"]
    assert shown[6]["error"]["code"] == "invalid_request"
    assert "surprise" in shown[8]["error"]["details"]
    assert all(entry["payout"] is None for entry in shown)

    await worker.drain()

    done = await read(client, merchant.headers(), batch["reference"])
    assert done["status"] == "completed", done
    assert done["completed_at"] is not None
    errors = {entry["external_id"]: entry["error"] for entry in done["items"] if entry["error"]}
    assert "item-1" in errors, done["items"]
    assert errors["item-1"]["code"] == "invalid_request"
    assert "amount" in errors["item-1"]["details"]
    assert errors["item-5"]["code"] == "invalid_request"
    assert errors["item-7"]["code"] == "payout_failed"
    paid = [entry for entry in done["items"] if entry["payout"]]
    assert [entry["external_id"] for entry in paid] == ["item-0", "item-9"]
    assert done["counts"] == {
        "total": 10,
        "queued": 0,
        "refused": 8,
        "pending": 0,
        "succeeded": 2,
        "failed": 0,
    }
    for entry in paid:
        payout = await client.get(f"/api/v1/payouts/{entry['payout']}", headers=merchant.headers())
        assert payout.json()["data"]["status"] == "succeeded"
        assert payout.json()["data"]["external_id"] == entry["external_id"]
    # item-7's payout was recorded failed, as POST /payouts records it, and nothing taken.
    assert ("item-7", "failed") in await payouts_of(runtime, merchant.id)
    assert await merchant_available(runtime, merchant.id) == 100_000 - 1000 - 2500
    events = await batch_events(runtime, batch["reference"])
    assert len(events) == 1
    assert "items" not in events[0]
    assert events[0]["status"] == "completed"
    assert events[0]["counts"] == done["counts"]


async def test_a_replay_of_the_batch_external_id_returns_the_same_batch(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    first = await send(client, merchant.headers(), [item(0), item(1)])
    assert first.status_code == 201
    # Whatever the replayed body says, as payouts: the batch made first, nothing more.
    again = await send(client, merchant.headers(), [item(7), item(8), item(9)])
    assert again.status_code == 200, again.text
    assert again.json()["data"] == first.json()["data"]
    await worker.drain()
    after = await send(client, merchant.headers(), [item(0)])
    assert after.status_code == 200
    shown = after.json()["data"]
    assert shown["reference"] == first.json()["data"]["reference"]
    assert shown["status"] == "completed"
    assert shown["counts"]["succeeded"] == 2
    assert sorted(external_id for external_id, _ in await payouts_of(runtime, merchant.id)) == [
        "item-0",
        "item-1",
    ]
    # Found by its external_id too; another environment does not see it.
    assert (await read(client, merchant.headers(), "batch-1"))["reference"] == shown["reference"]
    hidden = await client.get(f"{BATCHES}/batch-1", headers=merchant.headers(True))
    assert_error(hidden, 404, "not_found")
    # The same external_id in live is another batch.
    await top_up(runtime, merchant.id, 10_000, livemode=True)
    live = await send(client, merchant.headers(True), [item(0, phone_number=None, operator=None)])
    assert live.status_code == 201
    assert live.json()["data"]["reference"] != shown["reference"]


async def test_concurrent_replays_make_one_batch(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    answers = await asyncio.gather(
        *(send(client, merchant.headers(), [item(0), item(1)]) for _ in range(4))
    )
    assert sorted(answer.status_code for answer in answers) == [200, 200, 200, 201]
    assert len({answer.json()["data"]["reference"] for answer in answers}) == 1
    await worker.drain()
    assert len(await payouts_of(runtime, merchant.id)) == 2


async def test_items_are_paid_in_order_until_the_balance_runs_short(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 3500)
    items = [item(n, amount=1000) for n in range(6)]
    items[4] = item(4, amount=500)  # fits the 500 left after the first three
    response = await send(client, merchant.headers(), items)
    await worker.drain()
    done = await read(client, merchant.headers(), response.json()["data"]["reference"])
    assert done["status"] == "completed"
    shown = done["items"]
    assert [entry["external_id"] for entry in shown] == [f"item-{n}" for n in range(6)]
    assert [entry["payout"] is not None for entry in shown] == [True] * 3 + [False, True, False]
    assert [entry["error"]["code"] for entry in shown if entry["error"]] == [
        "insufficient_funds",
        "insufficient_funds",
    ]
    assert done["counts"] == {
        "total": 6,
        "queued": 0,
        "refused": 2,
        "pending": 0,
        "succeeded": 4,
        "failed": 0,
    }
    assert await merchant_available(runtime, merchant.id) == 0


async def test_pending_payouts_complete_the_batch_when_the_last_one_ends(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    items = [
        item(0),
        item(1, phone_number=SUCCEEDS_LATER),
        item(2, phone_number=FAILS_LATER),
        item(3, phone_number=STAYS_PENDING),
    ]
    reference = (await send(client, merchant.headers(), items)).json()["data"]["reference"]
    await worker.drain()
    batch = await read(client, merchant.headers(), reference)
    assert batch["status"] == "processing"
    assert batch["counts"] | {"total": 0} == {
        "total": 0,
        "queued": 0,
        "refused": 0,
        "pending": 3,
        "succeeded": 1,
        "failed": 0,
    }
    clock.advance(runtime.settings.test_settle_delay)
    await worker.drain()
    batch = await read(client, merchant.headers(), reference)
    assert batch["status"] == "processing"
    assert (batch["counts"]["succeeded"], batch["counts"]["failed"]) == (2, 1)
    assert await batch_events(runtime, reference) == []
    pending = batch["items"][3]["payout"]
    decided = await client.post(
        f"/api/v1/test-helpers/payouts/{pending}/succeed", headers=merchant.headers()
    )
    assert decided.status_code == 200
    await worker.drain()
    batch = await read(client, merchant.headers(), reference)
    assert batch["status"] == "completed"
    assert batch["counts"]["succeeded"] == 3
    [event] = await batch_events(runtime, reference)
    assert event == {key: value for key, value in batch.items() if key != "items"}
    # The failed payout was re-credited: 1,000 × 3 paid.
    assert await merchant_available(runtime, merchant.id) == 7000


async def test_the_list_is_an_envelope_without_items(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    await send(client, merchant.headers(), [item(0)], external_id="a")
    clock.advance(1)
    await send(client, merchant.headers(), [item(1, phone_number=STAYS_PENDING)], external_id="b")
    await worker.drain()
    clock.advance(1)
    await send(client, merchant.headers(), [{"amount": 10}], external_id="c")  # all refused
    listed = await client.get(BATCHES, headers=merchant.headers())
    assert listed.status_code == 200
    body = listed.json()
    assert body["meta"] == {"current_page": 1, "per_page": 25, "total": 3, "last_page": 1}
    assert [batch["external_id"] for batch in body["data"]] == ["c", "b", "a"]
    assert all("items" not in batch for batch in body["data"])
    assert [batch["status"] for batch in body["data"]] == ["completed", "processing", "completed"]
    assert body["data"][0]["counts"]["refused"] == 1
    assert body["data"][1]["counts"]["pending"] == 1
    only = await client.get(f"{BATCHES}?status=processing&per_page=1", headers=merchant.headers())
    assert [batch["external_id"] for batch in only.json()["data"]] == ["b"]
    assert only.json()["meta"]["total"] == 1
    assert (await client.get(BATCHES, headers=merchant.headers(True))).json()["data"] == []
