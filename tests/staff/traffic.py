"""Builders for the tests of the staff's reads (search, details, overview, exports): payments,
plans, payouts and refunds of two merchants in both environments, made through the API as
merchants make them, the clock moved between them so that each has its own instant."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

import httpx

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.pagination import Page
from cauri.runtime import Runtime
from cauri.staff import search
from cauri.staff.search import SearchFilter
from tests.foundation.builders import open_live_mode
from tests.payouts.builders import STAYS_PENDING, SUCCEEDS, top_up
from tests.plans.builders import create_plan, paid_instalment
from tests.support import MerchantKeys, make_merchant, momo_body

API = "/api/v1"

# The simulator decides by the last four digits (0000 succeeds, 0001 is refused, 0002 stays
# pending); the digits before them tell the numbers apart.
A_NUMBER = "22997110000"
REFUSED_NUMBER = "22997220001"
PENDING_NUMBER = "22997330002"
OTHER_NUMBER = "22997440000"
PLAN_NUMBER = "22997550000"


async def pay(
    client: httpx.AsyncClient, merchant: MerchantKeys, *, live: bool = False, **body: Any
) -> dict[str, Any]:
    response = await client.post(
        f"{API}/payments", json=momo_body(**body), headers=merchant.headers(live)
    )
    assert response.status_code in (201, 402), response.text
    if response.status_code == 402:  # refused: recorded failed, found by its external_id
        listed = await client.get(
            f"{API}/payments",
            params={"external_id": body["external_id"]},
            headers=merchant.headers(live),
        )
        found: dict[str, Any] = listed.json()["data"][0]
        return found
    data: dict[str, Any] = response.json()["data"]
    return data


@dataclass(frozen=True)
class Traffic:
    shop: MerchantKeys
    other: MerchantKeys
    paid: dict[str, Any]  # shop, test, succeeded, external_id order-1, refunded in part
    refused: dict[str, Any]  # shop, test, failed
    pending: dict[str, Any]  # shop, test, pending
    live: dict[str, Any]  # shop, live, succeeded, the same number as `paid`
    others: dict[str, Any]  # other, test, succeeded, external_id order-1 too, a day later
    plan: dict[str, Any]  # shop, test, one instalment from PLAN_NUMBER
    instalment: str  # its reference
    refund: dict[str, Any]  # of `paid`, 400, succeeded
    payout: dict[str, Any]  # shop, test, succeeded
    held: dict[str, Any]  # shop, test, pending


def to_noon_tomorrow(clock: ManualClock) -> None:
    """Far from midnight: what a test makes within minutes falls on one UTC day."""
    now = clock.now()
    noon = datetime.combine(now.date() + timedelta(days=1), time(12), tzinfo=UTC)
    clock.advance(seconds=(noon - now).total_seconds())


async def traffic(client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock) -> Traffic:
    """From noon (UTC) tomorrow; `others` the day after, at noon."""
    to_noon_tomorrow(clock)
    open_live_mode(runtime)
    shop = await make_merchant(runtime, name="Boutique Awa")
    other = await make_merchant(runtime, name="Kiosque Koffi")
    made: dict[str, Any] = {}
    for name, merchant, live, number in (
        ("paid", shop, False, A_NUMBER),
        ("refused", shop, False, REFUSED_NUMBER),
        ("pending", shop, False, PENDING_NUMBER),
        ("live", shop, True, A_NUMBER),
    ):
        clock.advance(seconds=1)
        made[name] = await pay(
            client, merchant, live=live, phone_number=number, external_id=f"order-{name}"
        )
    clock.advance(seconds=1)
    plan = await create_plan(client, shop, target_amount=10_000, external_id="plan-1")
    instalment = await paid_instalment(client, shop, plan["reference"], PLAN_NUMBER, 2000)
    clock.advance(seconds=1)
    refunded = await client.post(
        f"{API}/payments/{made['paid']['reference']}/refund",
        json={"amount": 400},
        headers=shop.headers(),
    )
    assert refunded.status_code == 201, refunded.text
    await top_up(runtime, shop.id, 10_000)
    clock.advance(seconds=1)
    payout = await client.post(
        f"{API}/payouts",
        json={"amount": 1000, "phone_number": SUCCEEDS, "operator": "mtn", "external_id": "po-1"},
        headers=shop.headers(),
    )
    clock.advance(seconds=1)
    held = await client.post(
        f"{API}/payouts",
        json={"amount": 1500, "phone_number": STAYS_PENDING, "operator": "mtn"},
        headers=shop.headers(),
    )
    assert payout.status_code == held.status_code == 201, (payout.text, held.text)
    clock.advance(days=1)
    others = await pay(client, other, phone_number=OTHER_NUMBER, external_id="order-paid")
    return Traffic(
        shop=shop,
        other=other,
        paid=made["paid"],
        refused=made["refused"],
        pending=made["pending"],
        live=made["live"],
        others=others,
        plan=plan,
        instalment=instalment,
        refund=refunded.json()["data"],
        payout=payout.json()["data"],
        held=held.json()["data"],
    )


async def found(
    runtime: Runtime, kind: str, *, page: Page | None = None, **wanted: Any
) -> tuple[list[str], int]:
    """The references `search.<kind>` finds, in its order, and its total."""
    async with unit_of_work(runtime.sessionmaker) as session:
        rows, total = await getattr(search, kind)(
            session, SearchFilter(**wanted), page or Page(1, 100)
        )
    key = "id" if kind in ("payments", "plans") else "reference"
    return [str(getattr(row, key)) for row in rows], total
