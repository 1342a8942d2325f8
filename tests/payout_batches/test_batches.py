"""Payout batches over HTTP: validated item by item, made in order by the worker, each an
ordinary payout; counts, replay, completion and its event (issue 28)."""

from __future__ import annotations

import httpx

from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import merchant_available
from tests.payout_batches.builders import batch_events, item, payouts_of, read, send
from tests.payouts.builders import REFUSED, top_up
from tests.support import make_merchant


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
