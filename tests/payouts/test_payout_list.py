"""GET /payouts: newest first, filters status, from, to (DESIGN: payout lists accept ISO 8601
dates or timestamps; lists are newest first, page parameter `page`)."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from tests.payouts.builders import PAYOUTS, REFUSED, STAYS_PENDING, create, top_up
from tests.support import assert_error, make_merchant


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 10, 9, 0, tzinfo=UTC))


async def _references(
    client: httpx.AsyncClient, headers: dict[str, str], **query: str
) -> list[str]:
    response = await client.get(PAYOUTS, params=query, headers=headers)
    assert response.status_code == 200, response.text
    return [p["external_id"] for p in response.json()["data"]]


async def test_filters_and_order(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    headers = merchant.headers()
    await top_up(runtime, merchant.id, 100_000)
    await create(client, headers, external_id="d10-ok")  # 2026-03-10 09:00
    clock.advance(hours=15)  # 2026-03-11 00:00
    await create(client, headers, external_id="d11-refused", phone_number=REFUSED)
    clock.advance(hours=12)  # 2026-03-11 12:00
    await create(client, headers, external_id="d11-pending", phone_number=STAYS_PENDING)
    clock.advance(days=1)  # 2026-03-12 12:00
    await create(client, headers, external_id="d12-ok")

    assert await _references(client, headers) == ["d12-ok", "d11-pending", "d11-refused", "d10-ok"]
    assert await _references(client, headers, status="succeeded") == ["d12-ok", "d10-ok"]
    assert await _references(client, headers, status="failed") == ["d11-refused"]
    assert await _references(client, headers, status="pending") == ["d11-pending"]
    # A date covers its whole day (UTC), at both ends.
    assert await _references(client, headers, **{"from": "2026-03-11", "to": "2026-03-11"}) == [
        "d11-pending",
        "d11-refused",
    ]
    assert await _references(client, headers, **{"from": "2026-03-11"}) == [
        "d12-ok",
        "d11-pending",
        "d11-refused",
    ]
    assert await _references(client, headers, to="2026-03-10") == ["d10-ok"]
    # Timestamps: `from` and `to` include their own instant; no offset means UTC.
    assert await _references(
        client, headers, **{"from": "2026-03-11T00:00:00+00:00", "to": "2026-03-11T12:00:00Z"}
    ) == ["d11-pending", "d11-refused"]
    assert await _references(client, headers, **{"from": "2026-03-11T13:00:00+01:00"}) == [
        "d12-ok",
        "d11-pending",
    ]
    assert await _references(client, headers, to="2026-03-10T09:00:00") == ["d10-ok"]
    assert await _references(client, headers, status="succeeded", **{"from": "2026-03-11"}) == [
        "d12-ok"
    ]


async def test_pagination_envelope(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 100_000)
    for n in range(5):
        await create(client, merchant.headers(), external_id=f"p{n}")
        clock.advance(1)
    response = await client.get(
        PAYOUTS, params={"per_page": 2, "page": 2}, headers=merchant.headers()
    )
    body = response.json()
    assert body["success"] is True
    assert [p["external_id"] for p in body["data"]] == ["p2", "p1"]
    assert body["meta"] == {"current_page": 2, "per_page": 2, "total": 5, "last_page": 3}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-01"}, "to"),
        ({"from": "2026-03-10T25:00:00"}, "from"),
        ({"status": "refunded"}, "status"),
        ({"per_page": "101"}, "per_page"),
    ],
)
async def test_bad_filters_are_422(
    client: httpx.AsyncClient, runtime: Runtime, query: dict[str, str], field: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.get(PAYOUTS, params=query, headers=merchant.headers())
    assert field in assert_error(response, 422, "invalid_request")["details"]
