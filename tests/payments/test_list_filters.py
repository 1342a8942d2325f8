"""Issue 12: GET /payments filters `status`, `from`, `to`, `operator` and `external_id`, which
combine; newest first always; a filter it cannot read is a 422 naming it, never everything."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from tests.payments.builders import PAYMENTS, pay
from tests.support import MerchantKeys, assert_error, card_body, make_merchant, momo_body

STAYS_PENDING = "22997000002"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 10, 9, 0, tzinfo=UTC))


async def _listed(client: httpx.AsyncClient, merchant: MerchantKeys, **query: str) -> list[str]:
    response = await client.get(PAYMENTS, params=query, headers=merchant.headers())
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"]["total"] == len(body["data"])
    return [p["external_id"] for p in body["data"]]


async def _history(client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock) -> MerchantKeys:
    """Four payments over three days, MTN and VISA, succeeded and pending."""
    merchant = await make_merchant(runtime)
    headers = merchant.headers()
    await pay(client, headers, momo_body(external_id="d10-mtn-ok"))  # 2026-03-10 09:00
    clock.advance(hours=15)  # 2026-03-11 00:00
    await pay(client, headers, card_body(external_id="d11-visa"))
    clock.advance(hours=12)  # 2026-03-11 12:00
    await pay(client, headers, momo_body(external_id="d11-mtn-pending", phone_number=STAYS_PENDING))
    clock.advance(days=1)  # 2026-03-12 12:00
    await pay(client, headers, momo_body(external_id="d12-mtn-ok"))
    return merchant


async def test_each_filter_and_their_combination(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await _history(client, runtime, clock)
    everything = ["d12-mtn-ok", "d11-mtn-pending", "d11-visa", "d10-mtn-ok"]
    assert await _listed(client, merchant) == everything

    assert await _listed(client, merchant, status="succeeded") == ["d12-mtn-ok", "d10-mtn-ok"]
    # Operator codes are case-insensitive, as everywhere.
    assert await _listed(client, merchant, operator="VISA") == ["d11-visa"]
    assert await _listed(client, merchant, operator="Mtn") == [
        "d12-mtn-ok",
        "d11-mtn-pending",
        "d10-mtn-ok",
    ]
    assert await _listed(client, merchant, external_id="d11-visa") == ["d11-visa"]
    assert await _listed(client, merchant, external_id="nobody") == []
    # A date covers its whole day (UTC) at both ends; a timestamp includes its own instant.
    assert await _listed(client, merchant, **{"from": "2026-03-11", "to": "2026-03-11"}) == [
        "d11-mtn-pending",
        "d11-visa",
    ]
    assert await _listed(client, merchant, **{"from": "2026-03-11T12:00:00Z"}) == [
        "d12-mtn-ok",
        "d11-mtn-pending",
    ]
    assert await _listed(client, merchant, to="2026-03-11T00:00:00+00:00") == [
        "d11-visa",
        "d10-mtn-ok",
    ]
    # Together: each narrows the others.
    assert await _listed(
        client, merchant, operator="mtn", status="pending", **{"from": "2026-03-11"}
    ) == ["d11-mtn-pending"]
    assert await _listed(client, merchant, operator="mtn", external_id="d11-visa") == []


async def test_filters_see_only_the_callers_environment(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await _history(client, runtime, clock)
    other = await make_merchant(runtime, name="Autre")
    for who, headers in ((other, other.headers()), (merchant, merchant.headers(livemode=True))):
        response = await client.get(
            PAYMENTS, params={"external_id": "d11-visa", "operator": "visa"}, headers=headers
        )
        assert response.json()["data"] == [], who


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"status": "paid"}, "status"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-45"}, "to"),
        ({"operator": "paypal"}, "operator"),
        ({"operator": "x" * 65}, "operator"),
        ({"external_id": "x" * 256}, "external_id"),
        ({"date": "2026-03-11"}, "date"),
        ({"statut": "pending"}, "statut"),
    ],
)
async def test_an_unreadable_filter_is_refused_not_ignored(
    client: httpx.AsyncClient, runtime: Runtime, query: dict[str, str], field: str
) -> None:
    merchant = await make_merchant(runtime)
    await pay(client, merchant.headers(), momo_body())
    response = await client.get(PAYMENTS, params=query, headers=merchant.headers())
    details = assert_error(response, 422, "invalid_request")["details"]
    assert list(details) == [field]
