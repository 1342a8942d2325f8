"""Issue 28's balance transactions (`GET /balance/transactions`): one line per movement of
the key's environment's balance, from the ledger, newest first: `net` = `amount` − `fee`
(signed), its `source`; filtered by type, currency and period; the lines add up to the
balance; another merchant's and the other environment's never show."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from tests.dashboard.test_statements import _traffic
from tests.payments.builders import merchant_available
from tests.staff.traffic import pay
from tests.support import assert_error, make_merchant

LIST = "/api/v1/balance/transactions"


async def _lines(client: httpx.AsyncClient, headers: dict[str, str], **query: Any) -> Any:
    answer = await client.get(LIST, params=query, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_the_lines_add_up_to_the_balance_newest_first(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant, _, _ = await _traffic(client, runtime, clock)
    other = await make_merchant(runtime, name="Autre")
    await pay(client, other, amount=900, external_id="ailleurs")
    listed = await _lines(client, merchant.headers(), per_page=100)
    lines = listed["data"]
    assert [line["type"] for line in lines] == ["payout", "refund", "payment", "payment", "topup"]
    assert listed["meta"]["total"] == 5
    assert all(
        Decimal(str(x["amount"])) - Decimal(str(x["fee"])) == Decimal(str(x["net"])) for x in lines
    )
    assert sum(line["net"] for line in lines) == await merchant_available(runtime, merchant.id)
    payment = next(line for line in lines if line["type"] == "payment" and line["fee"] > 0)
    assert payment["amount"] == 10_000 and payment["net"] == 10_000 - payment["fee"]
    assert all(line["livemode"] is False and line["currency"] == "XOF" for line in lines)
    live = await _lines(client, merchant.headers(True))
    assert live["data"] == []


async def test_filters_and_pages(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant, earlier, _ = await _traffic(client, runtime, clock)
    headers = merchant.headers()
    payments = await _lines(client, headers, type="payment")
    assert [line["type"] for line in payments["data"]] == ["payment", "payment"]
    assert (await _lines(client, headers, currency="XAF"))["data"] == []
    day = earlier.start.date().isoformat()
    old = await _lines(client, headers, to=earlier.end.date().isoformat(), **{"from": day})
    assert [line["type"] for line in old["data"]] == ["topup"]
    first = await _lines(client, headers, per_page=2)
    second = await _lines(client, headers, per_page=2, page=2)
    assert len(first["data"]) == len(second["data"]) == 2
    assert first["data"] != second["data"]
    for bad in ({"type": "cadeau"}, {"currency": "GBP"}, {"from": "hier"}):
        answer = await client.get(LIST, params=bad, headers=headers)
        assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid_request"


async def test_a_period_starting_in_an_archived_month_is_refused_not_answered_short(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Issue 29: the lines of a month archived (`cauri archive`) are no longer there; a list
    from within it would look complete and be short."""
    merchant = await make_merchant(runtime)
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text(
                "INSERT INTO ledger_periods (month, closed_at, archived_at) "
                "VALUES ('2020-01-01', now(), now())"
            )
        )
    refused = await client.get(LIST, params={"from": "2020-01-15"}, headers=merchant.headers())
    error = assert_error(refused, 422, "invalid_request")
    assert "from" in error["details"]
    kept = await client.get(LIST, params={"from": "2020-02-01"}, headers=merchant.headers())
    assert kept.status_code == 200
