"""A live payout batch through MTN MoMo, end to end over real HTTP (issue 28): each item's
payout commits before its transfer is asked (the call protocol), the batch waits for MTN's
callbacks and completes once the last transfer is settled."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.fakes.mtn_momo import MtnMomoFake
from tests.operators.live import callbacks_received, read, run
from tests.operators.mtn_live import NUMBER, mtn_fake, wire
from tests.payments.builders import merchant_available
from tests.payout_batches.builders import BATCHES, batch_events
from tests.payouts.builders import top_up
from tests.support import make_merchant


@pytest.fixture
def fake() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        yield fake


async def test_a_live_batch_completes_when_mtn_has_settled_every_transfer(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, fake: MtnMomoFake
) -> None:
    await wire(runtime, fake)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 2500, livemode=True)
    items = [
        {"amount": 1000, "phone_number": NUMBER, "operator": "mtn", "external_id": f"m-{n}"}
        for n in range(3)
    ]
    response = await client.post(
        BATCHES,
        json={"external_id": "mtn-batch", "items": items},
        headers=merchant.headers(livemode=True),
    )
    assert response.status_code == 201, response.text
    reference = response.json()["data"]["reference"]
    await worker.drain()
    # Two transfers asked and debited; the third is more than what is left.
    assert len(fake.received("transfer")) == 2
    batch = await read(client, merchant, f"payout-batches/{reference}")
    assert batch["status"] == "processing"
    assert [item["error"]["code"] if item["error"] else None for item in batch["items"]] == [
        None,
        None,
        "insufficient_funds",
    ]
    assert await merchant_available(runtime, merchant.id, livemode=True) == 500
    await callbacks_received(runtime, 2)
    await run(runtime, worker)
    batch = await read(client, merchant, f"payout-batches/{reference}")
    assert batch["status"] == "completed"
    assert batch["counts"]["succeeded"] == 2
    assert len(await batch_events(runtime, reference)) == 1
    assert await merchant_available(runtime, merchant.id, livemode=True) == 500
