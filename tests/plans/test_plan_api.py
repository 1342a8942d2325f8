"""Plan creation, reading and listing (spec: Installment plan, POST/GET /installment-plans)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from tests.plans.builders import (
    PLANS,
    cancel,
    count,
    create_plan,
    fetch,
    pay,
    set_plan_settings,
)
from tests.support import assert_error, make_merchant, momo_body

PLAN_FIELDS = {
    "reference",
    "external_id",
    "status",
    "description",
    "currency",
    "target_amount",
    "creation_fee_amount",
    "cancellation_penalty_percent",
    "paid_amount",
    "remaining_amount",
    "cancellation_reason",
    # Issue 12: a settled cancellation's amounts and the staff's resolution.
    "refunded_amount",
    "penalty_amount",
    "resolution",
    "resolution_reason",
    "resolved_at",
    "livemode",
    "expires_at",
    "completed_at",
    "cancelled_at",
    "created_at",
}


async def test_creation_returns_a_pending_plan_without_payments(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_creation_fee_fixed=500, plan_penalty_percent="10")
    plan = await create_plan(
        client, merchant, target_amount=20_000, description="Moto", external_id="moto-1"
    )
    assert set(plan) == PLAN_FIELDS  # no `payments` on creation
    assert plan["status"] == "pending"
    assert plan["currency"] == "XOF"
    assert plan["target_amount"] == 20_000
    assert plan["creation_fee_amount"] == 500
    assert plan["cancellation_penalty_percent"] == 10
    assert plan["paid_amount"] == 0
    assert plan["remaining_amount"] == 20_000
    assert plan["livemode"] is False
    assert plan["description"] == "Moto" and plan["external_id"] == "moto-1"
    assert plan["completed_at"] is None and plan["cancelled_at"] is None
    assert plan["cancellation_reason"] is None
    created = datetime.fromisoformat(plan["created_at"])
    assert created.utcoffset() is not None
    assert datetime.fromisoformat(plan["expires_at"]) - created == timedelta(days=60)


async def test_lifetime_comes_from_the_setting(client: httpx.AsyncClient, runtime: Runtime) -> None:
    runtime.settings.plan_lifetime_days = 7
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant)
    lifetime = datetime.fromisoformat(plan["expires_at"]) - datetime.fromisoformat(
        plan["created_at"]
    )
    assert lifetime == timedelta(days=7)


async def test_percent_creation_fee_is_rounded_half_up(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_creation_fee_percent="2.5")
    assert (await create_plan(client, merchant, target_amount=1_020))["creation_fee_amount"] == 26
    assert (await create_plan(client, merchant, target_amount=1_010))["creation_fee_amount"] == 25
    euros = await create_plan(client, merchant, target_amount=10.10, currency="EUR")
    assert euros["target_amount"] == 10.1
    assert euros["creation_fee_amount"] == 0.25  # 2.5 % of 1010 cents = 25.25 -> 25 cents


async def test_a_settings_change_never_alters_an_existing_plan(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_creation_fee_fixed=500, plan_penalty_percent="10")
    plan = await create_plan(client, merchant, target_amount=20_000)
    await set_plan_settings(runtime, plan_creation_fee_percent="5", plan_penalty_percent="50")
    again = await fetch(client, merchant, plan["reference"])
    assert again["creation_fee_amount"] == 500
    assert again["cancellation_penalty_percent"] == 10
    newer = await create_plan(client, merchant, target_amount=20_000)
    assert newer["creation_fee_amount"] == 1_000
    assert newer["cancellation_penalty_percent"] == 50
    # The first instalment still owes the old fee, not the new one.
    assert_error(await pay(client, merchant, plan["reference"], amount=499), 422, "invalid_request")
    paid = await pay(client, merchant, plan["reference"], amount=500)
    assert paid.status_code == 201, paid.text
    assert (await fetch(client, merchant, plan["reference"]))["paid_amount"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"target_amount": 0}, "target_amount"),
        ({"target_amount": 100_000_000}, "target_amount"),
        ({"target_amount": -5}, "target_amount"),
        ({"target_amount": 10.5}, "target_amount"),  # XOF has no decimals
        ({"target_amount": "beaucoup"}, "target_amount"),
        ({}, "target_amount"),
        ({"target_amount": 1000, "description": "x" * 256}, "description"),
        ({"target_amount": 1000, "currency": "GBP"}, "currency"),
        ({"target_amount": 1000, "external_id": ""}, "external_id"),
    ],
)
async def test_creation_validation(
    client: httpx.AsyncClient, runtime: Runtime, body: dict[str, object], field: str
) -> None:
    merchant = await make_merchant(runtime)
    error = assert_error(
        await client.post(PLANS, json=body, headers=merchant.headers()), 422, "invalid_request"
    )
    assert field in error["details"]
    assert await count(runtime, "SELECT count(*) FROM installment_plans") == 0
    assert await count(runtime, "SELECT count(*) FROM jobs") == 0


async def test_creation_bounds_are_inclusive(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    assert (await create_plan(client, merchant, target_amount=1))["target_amount"] == 1
    top = await create_plan(client, merchant, target_amount=99_999_999, description="x" * 255)
    assert top["target_amount"] == 99_999_999


async def test_external_id_replay_returns_the_existing_plan(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    first = await create_plan(client, merchant, external_id="order-7")
    replay = await client.post(
        PLANS, json={"target_amount": 99, "external_id": "order-7"}, headers=merchant.headers()
    )
    assert replay.status_code == 200, replay.text
    assert replay.json()["data"] == first
    assert await count(runtime, "SELECT count(*) FROM installment_plans") == 1


async def test_concurrent_replays_create_one_plan(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    body = {"target_amount": 5_000, "external_id": "same"}
    responses = await asyncio.gather(
        *(client.post(PLANS, json=body, headers=merchant.headers()) for _ in range(20))
    )
    assert sorted(r.status_code for r in responses) == [200] * 19 + [201]
    assert len({r.json()["data"]["reference"] for r in responses}) == 1
    assert await count(runtime, "SELECT count(*) FROM installment_plans") == 1
    # One expiry job: replays schedule nothing.
    assert await count(runtime, "SELECT count(*) FROM jobs WHERE kind = 'plans.expire'") == 1


async def test_environments_and_merchants_never_mix(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    test_plan = await create_plan(client, merchant, external_id="x")
    live_plan = await create_plan(client, merchant, livemode=True, external_id="x")
    assert live_plan["reference"] != test_plan["reference"]
    assert live_plan["livemode"] is True
    for reference in (live_plan["reference"], "x"):
        fetched = await client.get(f"{PLANS}/{reference}", headers=merchant.headers(True))
        assert fetched.json()["data"]["reference"] == live_plan["reference"]
    for reference in (test_plan["reference"], "x"):
        assert_error(
            await client.get(f"{PLANS}/{reference}", headers=other.headers()), 404, "not_found"
        )
    assert_error(
        await client.get(f"{PLANS}/{test_plan['reference']}", headers=merchant.headers(True)),
        404,
        "not_found",
    )
    for path, body in (("payments", momo_body()), ("cancel", {"reason": "x"})):
        assert_error(
            await client.post(
                f"{PLANS}/{test_plan['reference']}/{path}",
                json=body,
                headers=other.headers(),
            ),
            404,
            "not_found",
        )
    listed = await client.get(PLANS, headers=merchant.headers(True))
    assert [p["reference"] for p in listed.json()["data"]] == [live_plan["reference"]]


async def test_get_by_reference_or_external_id_carries_the_instalments(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, external_id="velo")
    first = (await pay(client, merchant, plan["reference"], amount=1_000)).json()["data"]
    clock.advance(1)
    second = (await pay(client, merchant, "velo", amount=2_000)).json()["data"]
    for reference in (plan["reference"], "velo"):
        fetched = await fetch(client, merchant, reference)
        assert set(fetched) == PLAN_FIELDS | {"payments"}
        assert fetched["payments"] == [first, second]  # oldest first
    assert_error(await client.get(f"{PLANS}/inconnu", headers=merchant.headers()), 404, "not_found")
    assert_error(
        await client.get(
            f"{PLANS}/00000000-0000-0000-0000-000000000000", headers=merchant.headers()
        ),
        404,
        "not_found",
    )


async def test_list_is_paginated_newest_first_without_payments(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    references = []
    for _ in range(5):
        references.append((await create_plan(client, merchant))["reference"])
        clock.advance(1)
    response = await client.get(
        PLANS, params={"per_page": 2, "page": 2}, headers=merchant.headers()
    )
    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True
    assert body["meta"] == {"current_page": 2, "per_page": 2, "total": 5, "last_page": 3}
    assert [p["reference"] for p in body["data"]] == references[::-1][2:4]
    assert all("payments" not in p for p in body["data"])
    default = (await client.get(PLANS, headers=merchant.headers())).json()
    assert default["meta"]["per_page"] == 25 and len(default["data"]) == 5
    for per_page in (0, 101):
        assert_error(
            await client.get(PLANS, params={"per_page": per_page}, headers=merchant.headers()),
            422,
            "invalid_request",
        )


async def test_cancel_response_has_no_payments(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant)
    response = await cancel(client, merchant, plan["reference"], "Changement d'avis")
    assert response.status_code == 200
    assert set(response.json()["data"]) == PLAN_FIELDS


async def test_plan_routes_require_a_key(client: httpx.AsyncClient, runtime: Runtime) -> None:
    assert_error(await client.post(PLANS, json={"target_amount": 10}), 401, "unauthorized")
    assert_error(await client.get(PLANS), 401, "unauthorized")
    assert_error(await client.delete(PLANS), 405, "method_not_allowed")


async def test_list_filters_by_status_newest_first(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    """Issue 12: `status` filters the list; a filter it cannot read is a 422, not everything."""
    merchant = await make_merchant(runtime)
    older = (await create_plan(client, merchant, target_amount=1_000))["reference"]
    clock.advance(1)
    paid = (await create_plan(client, merchant, target_amount=1_000))["reference"]
    assert (await pay(client, merchant, paid, amount=1_000)).status_code == 201
    clock.advance(1)
    newer = (await create_plan(client, merchant, target_amount=1_000))["reference"]

    async def listed(**query: str) -> list[str]:
        response = await client.get(PLANS, params=query, headers=merchant.headers())
        assert response.status_code == 200, response.text
        return [plan["reference"] for plan in response.json()["data"]]

    assert await listed() == [newer, paid, older]
    assert await listed(status="pending") == [newer, older]
    assert await listed(status="succeeded") == [paid]
    assert await listed(status="refunded") == []
    for query, field in (({"status": "paid"}, "status"), ({"from": "2026-01-01"}, "from")):
        response = await client.get(PLANS, params=query, headers=merchant.headers())
        assert list(assert_error(response, 422, "invalid_request")["details"]) == [field]
