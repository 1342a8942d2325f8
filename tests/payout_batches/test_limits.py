"""A payout batch's body: refused as a whole only when the batch itself is malformed (never a
500), up to 1,000 items within its own body limit, which no other route shares (issue 28)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from cauri.kit.body_limit import MAX_BODY_BYTES
from cauri.payout_batches.schemas import MAX_BODY_BYTES as BATCH_BODY_BYTES
from cauri.payout_batches.schemas import MAX_ITEMS
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import merchant_available
from tests.payout_batches.builders import BATCHES, item, read, send
from tests.payouts.builders import PAYOUTS, top_up
from tests.support import assert_error, make_merchant, scalar


async def _batches_written(runtime: Runtime) -> int:
    return int(await scalar(runtime, "SELECT count(*) FROM payout_batches"))


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"external_id": "b", "items": []}, "items"),
        ({"external_id": "b", "items": [item(n) for n in range(MAX_ITEMS + 1)]}, "items"),
        ({"external_id": "b", "items": {"0": item(0)}}, "items"),
        ({"external_id": "b", "items": "many"}, "items"),
        ({"external_id": "b"}, "items"),
        ({"items": [item(0)]}, "external_id"),
        ({"external_id": 12, "items": [item(0)]}, "external_id"),
        ({"external_id": "", "items": [item(0)]}, "external_id"),
        ({"external_id": "b", "items": [item(0)], "extra": 1}, "extra"),
        ([item(0)], "body"),
    ],
)
async def test_a_malformed_batch_is_refused_whole(
    client: httpx.AsyncClient, runtime: Runtime, body: Any, field: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.post(BATCHES, json=body, headers=merchant.headers())
    error = assert_error(response, 422, "invalid_request")
    assert field in error["details"], error
    assert await _batches_written(runtime) == 0


async def test_malformed_items_are_refused_one_by_one_never_a_500(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000)
    items: list[Any] = [
        None,
        12,
        [],
        {},
        {"external_id": None},
        {"external_id": ["x"], "amount": 1000},
        item(6, amount=True),
        item(7, amount=10**20),
        item(8, amount=1000.5),
        item(9, phone_number="22997"),
        item(10, metadata="not an object"),
        item(11, currency="EUR"),
        item(12, external_id="x" * 256),
        item(13),
    ]
    response = await send(client, merchant.headers(), items)
    assert response.status_code == 201, response.text
    await worker.drain()
    done = await read(client, merchant.headers(), response.json()["data"]["reference"])
    assert done["status"] == "completed"
    codes = [entry["error"]["code"] if entry["error"] else "paid" for entry in done["items"]]
    assert codes == ["invalid_request"] * 13 + ["paid"]
    assert all(entry["error"]["details"] for entry in done["items"][:13])
    assert await merchant_available(runtime, merchant.id) == 4000


def _padded_item(number: int, size: int) -> dict[str, Any]:
    """An item of about `size` bytes of JSON: its metadata pads it."""
    bare = len(json.dumps(item(number)))
    return item(number, metadata={"pad": "x" * (size - bare - 20)})


async def test_a_thousand_items_are_accepted_and_paid(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, MAX_ITEMS * 10)
    # Above every other route's limit: 1,000 items of ~1 KiB.
    items = [_padded_item(n, 1024) | {"amount": 10} for n in range(MAX_ITEMS)]
    body = json.dumps({"external_id": "big", "items": items}).encode()
    assert MAX_BODY_BYTES < len(body) < BATCH_BODY_BYTES
    response = await client.post(
        BATCHES, content=body, headers=merchant.headers() | {"Content-Type": "application/json"}
    )
    assert response.status_code == 201, response.text[:300]
    accepted = response.json()["data"]
    assert accepted["counts"]["queued"] == MAX_ITEMS
    await worker.drain()
    done = await read(client, merchant.headers(), accepted["reference"])
    assert done["status"] == "completed"
    assert done["counts"]["succeeded"] == MAX_ITEMS
    assert [entry["external_id"] for entry in done["items"]] == [
        f"item-{n}" for n in range(MAX_ITEMS)
    ]
    assert await merchant_available(runtime, merchant.id) == 0


async def test_the_larger_limit_is_the_batch_route_s_only(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    headers = merchant.headers() | {"Content-Type": "application/json"}
    over_default = b" " * (MAX_BODY_BYTES + 1)
    # Another route, and another method on the batches' path: 256 KiB, as before.
    for method, path in (("POST", PAYOUTS), ("POST", "/api/v1/payments"), ("GET", BATCHES)):
        response = await client.request(method, path, content=over_default, headers=headers)
        assert_error(response, 413, "payload_too_large")
    # The batch route reads it (a body of spaces is malformed JSON, not too large)...
    response = await client.post(BATCHES, content=over_default, headers=headers)
    assert_error(response, 422, "invalid_request")
    # ...up to its own limit.
    response = await client.post(BATCHES, content=b" " * (BATCH_BODY_BYTES + 1), headers=headers)
    assert_error(response, 413, "payload_too_large")
    assert await _batches_written(runtime) == 0
