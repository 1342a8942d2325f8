"""Idempotency by external_id (invariant 4; DESIGN: replay is 200), reading one payment by
reference or external_id, and the paginated list (spec: List envelope; DESIGN: newest first)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from tests.payments.builders import (
    PAYMENTS,
    FakeLiveOperator,
    count_rows,
    merchant_available,
    pay,
    platform_fees,
    set_platform_fees,
)
from tests.support import assert_error, card_body, make_merchant, momo_body


async def test_replay_returns_the_same_payment_with_200(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    first = await pay(client, merchant.headers(), momo_body(external_id="order-7"))
    assert first.status_code == 201
    # A replay returns the recorded payment, whatever the second body says.
    again = await pay(client, merchant.headers(), momo_body(external_id="order-7", amount=5000))
    assert again.status_code == 200
    assert again.json()["data"] == first.json()["data"]
    assert await count_rows(runtime, "payments") == 1
    assert await merchant_available(runtime, merchant.id) == 1000


async def test_replay_of_a_refused_payment_returns_it_failed(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    body = momo_body(phone_number="22997000001", external_id="order-8")
    assert_error(await pay(client, merchant.headers(), body), 402, "payment_failed")
    again = await pay(client, merchant.headers(), body)
    assert again.status_code == 200 and again.json()["data"]["status"] == "failed"
    assert await count_rows(runtime, "payments") == 1


async def test_rejected_request_does_not_take_the_external_id(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    bad = await pay(client, merchant.headers(), momo_body(amount=5, external_id="order-9"))
    assert_error(bad, 422, "invalid_request")
    good = await pay(client, merchant.headers(), momo_body(external_id="order-9"))
    assert good.status_code == 201


async def test_without_external_id_two_calls_make_two_payments(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    first = (await pay(client, merchant.headers(), momo_body())).json()["data"]
    second = (await pay(client, merchant.headers(), momo_body())).json()["data"]
    assert first["reference"] != second["reference"]
    assert first["identifier"] != second["identifier"]
    assert await count_rows(runtime, "payments") == 2
    assert await merchant_available(runtime, merchant.id) == 2000


async def test_external_id_is_per_environment_and_per_merchant(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    runtime.operators.live_adapters["mtn"] = FakeLiveOperator()
    body = momo_body(external_id="shared")
    test = await pay(client, merchant.headers(), body)
    live = await pay(client, merchant.headers(livemode=True), body)
    theirs = await pay(client, other.headers(), body)
    assert (test.status_code, live.status_code, theirs.status_code) == (201, 201, 201)
    references = {r.json()["data"]["reference"] for r in (test, live, theirs)}
    assert len(references) == 3
    assert live.json()["data"]["livemode"] is True
    # Each key reads its own.
    by_test = await client.get(f"{PAYMENTS}/shared", headers=merchant.headers())
    by_live = await client.get(f"{PAYMENTS}/shared", headers=merchant.headers(livemode=True))
    assert by_test.json()["data"]["reference"] == test.json()["data"]["reference"]
    assert by_live.json()["data"]["reference"] == live.json()["data"]["reference"]


async def test_concurrent_replays_make_one_payment_and_one_credit(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_platform_fees(runtime, percent="1")
    body = momo_body(external_id="burst", amount=2000)
    responses = await asyncio.gather(*(pay(client, merchant.headers(), body) for _ in range(50)))
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * 49 + [201], statuses
    assert len({r.json()["data"]["reference"] for r in responses}) == 1
    assert await count_rows(runtime, "payments") == 1
    assert await count_rows(runtime, "ledger_transactions") == 1
    assert await merchant_available(runtime, merchant.id) == 2000
    assert await platform_fees(runtime) == 20
    assert await count_rows(runtime, "events") == 1


async def test_get_by_reference_and_by_external_id(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = (await pay(client, merchant.headers(), momo_body(external_id="ext-1"))).json()["data"]
    by_reference = await client.get(
        f"{PAYMENTS}/{payment['reference']}", headers=merchant.headers()
    )
    by_external = await client.get(f"{PAYMENTS}/ext-1", headers=merchant.headers())
    assert by_reference.status_code == by_external.status_code == 200
    assert by_reference.json() == by_external.json() == {"success": True, "data": payment}


async def test_reference_wins_over_an_external_id_that_looks_like_one(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    first = (await pay(client, merchant.headers(), momo_body())).json()["data"]
    # A second payment whose external_id is the first one's reference.
    await pay(client, merchant.headers(), momo_body(external_id=first["reference"]))
    fetched = await client.get(f"{PAYMENTS}/{first['reference']}", headers=merchant.headers())
    assert fetched.json()["data"]["reference"] == first["reference"]


@pytest.mark.parametrize("reference", ["nope", "00000000-0000-0000-0000-000000000000"])
async def test_unknown_payment_is_404(
    client: httpx.AsyncClient, runtime: Runtime, reference: str
) -> None:
    merchant = await make_merchant(runtime)
    assert_error(
        await client.get(f"{PAYMENTS}/{reference}", headers=merchant.headers()), 404, "not_found"
    )


async def test_another_merchant_payment_is_404(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    payment = (await pay(client, merchant.headers(), momo_body(external_id="mine"))).json()["data"]
    for reference in (payment["reference"], "mine"):
        response = await client.get(f"{PAYMENTS}/{reference}", headers=other.headers())
        assert_error(response, 404, "not_found")
    assert (await client.get(PAYMENTS, headers=other.headers())).json()["data"] == []


async def make_payments(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, count: int
) -> tuple[Any, list[str]]:
    """`count` payments one second apart; returns the merchant and references oldest first."""
    merchant = await make_merchant(runtime)
    references = []
    for index in range(count):
        # Every third one stays pending, the rest succeed.
        number = "22997000002" if index % 3 == 0 else "22997000000"
        body = momo_body(phone_number=number, amount=100 + index)
        references.append((await pay(client, merchant.headers(), body)).json()["data"]["reference"])
        clock.advance(1)
    return merchant, references


async def test_list_is_newest_first_and_paginated(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant, references = await make_payments(client, runtime, clock, 7)
    newest_first = list(reversed(references))

    response = await client.get(PAYMENTS, headers=merchant.headers())
    body = response.json()
    assert body["success"] is True
    assert [p["reference"] for p in body["data"]] == newest_first
    assert body["meta"] == {"current_page": 1, "per_page": 25, "total": 7, "last_page": 1}

    pages = []
    for page in (1, 2, 3):
        response = await client.get(
            PAYMENTS, params={"per_page": 3, "page": page}, headers=merchant.headers()
        )
        body = response.json()
        assert body["meta"] == {"current_page": page, "per_page": 3, "total": 7, "last_page": 3}
        pages.append([p["reference"] for p in body["data"]])
    assert pages == [newest_first[0:3], newest_first[3:6], newest_first[6:7]]
    beyond = await client.get(
        PAYMENTS, params={"page": 4, "per_page": 3}, headers=merchant.headers()
    )
    assert beyond.json()["data"] == [] and beyond.json()["meta"]["total"] == 7


async def test_list_status_filter(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant, references = await make_payments(client, runtime, clock, 7)
    pending = await client.get(PAYMENTS, params={"status": "pending"}, headers=merchant.headers())
    assert [p["reference"] for p in pending.json()["data"]] == [
        references[6],
        references[3],
        references[0],
    ]
    assert all(p["status"] == "pending" for p in pending.json()["data"])
    assert pending.json()["meta"]["total"] == 3
    succeeded = await client.get(
        PAYMENTS, params={"status": "succeeded"}, headers=merchant.headers()
    )
    assert succeeded.json()["meta"]["total"] == 4
    refunded = await client.get(PAYMENTS, params={"status": "refunded"}, headers=merchant.headers())
    assert refunded.json()["data"] == [] and refunded.json()["meta"]["last_page"] == 1


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"per_page": "0"}, "per_page"),
        ({"per_page": "101"}, "per_page"),
        ({"per_page": "abc"}, "per_page"),
        ({"page": "0"}, "page"),
        ({"status": "paid"}, "status"),
    ],
)
async def test_list_invalid_parameters(
    client: httpx.AsyncClient, runtime: Runtime, params: dict[str, str], field: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.get(PAYMENTS, params=params, headers=merchant.headers())
    assert field in assert_error(response, 422, "invalid_request")["details"]


@pytest.mark.parametrize("per_page", [1, 100])
async def test_list_per_page_bounds_are_inclusive(
    client: httpx.AsyncClient, runtime: Runtime, per_page: int
) -> None:
    merchant = await make_merchant(runtime)
    await pay(client, merchant.headers(), momo_body())
    response = await client.get(PAYMENTS, params={"per_page": per_page}, headers=merchant.headers())
    assert response.status_code == 200 and response.json()["meta"]["per_page"] == per_page


async def test_list_is_per_environment(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    runtime.operators.live_adapters["visa"] = FakeLiveOperator()
    await pay(client, merchant.headers(), momo_body())
    await pay(client, merchant.headers(livemode=True), card_body())
    test = (await client.get(PAYMENTS, headers=merchant.headers())).json()
    live = (await client.get(PAYMENTS, headers=merchant.headers(livemode=True))).json()
    assert [p["livemode"] for p in test["data"]] == [False]
    assert [p["livemode"] for p in live["data"]] == [True]
