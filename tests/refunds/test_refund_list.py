"""GET /refunds: the merchant's refunds in the key's environment, newest first, paginated,
filtered by payment, status, from and to (DESIGN: Refunds; lists are newest first, `from`
and `to` are ISO 8601 dates or timestamps)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from tests.refunds.builders import REFUNDS, ask_refund, paid_payment, refund_of
from tests.support import MerchantKeys, assert_error, make_merchant


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 10, 9, 0, tzinfo=UTC))


async def _reasons(client: httpx.AsyncClient, merchant: MerchantKeys, **query: Any) -> list[str]:
    response = await client.get(REFUNDS, params=query, headers=merchant.headers())
    assert response.status_code == 200, response.text
    return [r["reason"] for r in response.json()["data"]]


async def _refused_at_initiation(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, payment: str
) -> None:
    """A refund the simulator refuses (a 0001 number): recorded failed, nothing taken."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text("UPDATE payments SET phone_number = '22997000001' WHERE CAST(id AS text) = :id"),
            {"id": payment},
        )
    response = await ask_refund(client, merchant, payment, reason="d11-failed")
    assert_error(response, 402, "refund_failed")


async def test_filters_and_order(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    first = await paid_payment(client, merchant, amount=1000, external_id="order-1")
    second = await paid_payment(client, merchant, amount=2000)
    assert (
        await ask_refund(client, merchant, first["reference"], amount=300, reason="d10-a")
    ).is_success
    clock.advance(hours=15)  # 2026-03-11 00:00
    await _refused_at_initiation(client, runtime, merchant, second["reference"])
    clock.advance(hours=12)  # 2026-03-11 12:00
    assert (await ask_refund(client, merchant, first["reference"], reason="d11-rest")).is_success

    assert await _reasons(client, merchant) == ["d11-rest", "d11-failed", "d10-a"]
    assert await _reasons(client, merchant, payment=first["reference"]) == ["d11-rest", "d10-a"]
    # A payment is named by its reference or by the merchant's external_id.
    assert await _reasons(client, merchant, payment="order-1") == ["d11-rest", "d10-a"]
    assert await _reasons(client, merchant, payment=second["reference"]) == ["d11-failed"]
    assert await _reasons(client, merchant, payment="no-such-payment") == []
    assert await _reasons(client, merchant, status="failed") == ["d11-failed"]
    assert await _reasons(client, merchant, status="succeeded") == ["d11-rest", "d10-a"]
    assert await _reasons(client, merchant, status="pending") == []
    # A date covers its whole day (UTC); a timestamp includes its own instant.
    assert await _reasons(client, merchant, **{"from": "2026-03-11"}) == [
        "d11-rest",
        "d11-failed",
    ]
    assert await _reasons(client, merchant, to="2026-03-10") == ["d10-a"]
    assert await _reasons(
        client, merchant, **{"from": "2026-03-11T00:00:00Z", "to": "2026-03-11T00:00:00Z"}
    ) == ["d11-failed"]
    assert await _reasons(
        client, merchant, payment=first["reference"], status="succeeded", to="2026-03-10"
    ) == ["d10-a"]
    # The list shows the objects GET /refunds/{reference} shows.
    listed = (await client.get(REFUNDS, headers=merchant.headers())).json()["data"]
    assert listed[1] == await refund_of(client, merchant, listed[1]["reference"])
    assert (listed[1]["failure_code"], listed[0]["failure_code"]) == ("refused_at_initiation", None)


async def test_pagination_envelope(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    payment = await paid_payment(client, merchant, amount=1000)
    for n in range(5):
        clock.advance(1)
        refund = await ask_refund(client, merchant, payment["reference"], amount=100, reason=str(n))
        assert refund.status_code == 201
    page = await client.get(REFUNDS, params={"per_page": 2, "page": 2}, headers=merchant.headers())
    assert page.status_code == 200, page.text
    body = page.json()
    assert body["meta"] == {"current_page": 2, "per_page": 2, "total": 5, "last_page": 3}
    assert [r["reason"] for r in body["data"]] == ["2", "1"]


async def test_private_to_the_merchant_and_environment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    payment = await paid_payment(client, merchant)
    assert (await ask_refund(client, merchant, payment["reference"])).status_code == 201
    assert await _reasons(client, other) == []
    live = await client.get(REFUNDS, headers=merchant.headers(livemode=True))
    assert live.json()["data"] == [] and live.json()["meta"]["total"] == 0
    # Another merchant cannot learn of the payment through the filter either.
    assert await _reasons(client, other, payment=payment["reference"]) == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"status": "refunded"}, "status"),
        ({"from": "hier"}, "from"),
        ({"to": "2026-13-01"}, "to"),
        ({"per_page": 101}, "per_page"),
        ({"page": 0}, "page"),
    ],
)
async def test_bad_filters_are_422(
    client: httpx.AsyncClient, runtime: Runtime, query: dict[str, Any], field: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.get(REFUNDS, params=query, headers=merchant.headers())
    assert field in assert_error(response, 422, "invalid_request")["details"]
