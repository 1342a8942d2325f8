"""The call protocol through a connector account the staff configured (a route in the
database, not an in-process adapter): the operation names the account, its status queries
and callbacks find it by that name, and a route changed meanwhile does not move a request
already sent."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from cauri.operators.protocol import Outcome
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.calls.builders import exchanges_of, operation_of, poll_after
from tests.connectors.builders import Builds, add_fake, registered_kinds, set_route
from tests.payments.builders import merchant_available, pay
from tests.support import make_merchant, momo_body


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
