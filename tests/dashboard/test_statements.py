"""Issue 26: a month's statement per currency and environment (owners and finance): opening
balance, movements by kind with the commissions taken from the merchant, closing balance, as
a page, a printable page and a CSV with the balance after each line; the figures are the
ledger's (a month's closing is the next one's opening, the last closing is the balance)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import httpx
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import text

from cauri.balance.transactions import statement
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.money import format_amount
from cauri.kit.months import Month
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from tests.console.builders import ConsoleClient, make_member
from tests.payments.builders import merchant_available, set_fee
from tests.payouts.builders import create, top_up
from tests.staff.traffic import pay
from tests.support import MerchantKeys, make_merchant, scalar

API = "/api/v1"
PAGE = "/dashboard/test/statements"


async def _traffic(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> tuple[MerchantKeys, Month, Month]:
    """A top-up 40 days ago (another month), then this month: a payment whose fee the
    merchant bears, one whose customer pays it, a refund and a payout."""
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent="2")
    clock.advance(days=-40)
    await top_up(runtime, merchant.id, 5000)
    earlier = Month.of(clock.now())
    clock.advance(days=40)
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_fee_bearer(session, merchant.id, "merchant")
    paid = await pay(client, merchant, amount=10_000, external_id="o-1")
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_fee_bearer(session, merchant.id, "customer")
    await pay(client, merchant, amount=3000, external_id="o-2")
    refund = await client.post(
        f"{API}/payments/{paid['reference']}/refund",
        json={"amount": 1000},
        headers=merchant.headers(),
    )
    assert refund.status_code == 201, refund.text
    assert (await create(client, merchant.headers(), amount=2000)).status_code == 201
    return merchant, earlier, Month.of(clock.now())


async def test_the_statement_equals_the_ledger_month_to_month(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant, earlier, month = await _traffic(client, runtime, clock)
    assert earlier != month
    async with runtime.sessionmaker() as session:
        before = await statement(session, merchant.id, False, "XOF", earlier)
        now = await statement(session, merchant.id, False, "XOF", month)
        live = await statement(session, merchant.id, True, "XOF", month)
    assert (before.opening, before.closing) == (0, 5000)
    assert now.opening == before.closing
    assert now.closing == await merchant_available(runtime, merchant.id)
    assert (live.opening, live.closing, live.totals) == (0, 0, [])
    by_type = {total.type: total for total in now.totals}
    assert set(by_type) == {"payment", "refund", "payout"}
    payments = (await client.get(f"{API}/payments", headers=merchant.headers())).json()["data"]
    fee_of = {p["external_id"]: int(p["fee_amount"]) for p in payments}
    # The merchant bore o-1's fee: gross 10,000, its fee a commission; o-2's customer paid
    # its fee on top: 3,000 gross and net, nothing taken from the merchant.
    assert by_type["payment"].count == 2
    assert by_type["payment"].amount == 13_000
    assert by_type["payment"].fee == fee_of["o-1"] > 0
    assert by_type["payment"].net == 13_000 - fee_of["o-1"]
    assert by_type["refund"].amount == -1000
    assert by_type["payout"].amount == -2000
    assert now.fees == sum(total.fee for total in now.totals)


async def test_the_pages_and_the_csv_show_the_ledger_s_figures(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, dashboard: ConsoleClient
) -> None:
    merchant, earlier, month = await _traffic(client, runtime, clock)
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "f@shop.example", "finance")
    )
    closing = await merchant_available(runtime, merchant.id)
    query = f"?month={month.name}&currency=XOF"
    page = await dashboard.get(PAGE + query)
    assert page.status_code == 200, page.text
    assert format_amount(5000, "XOF") in page.text.split('id="opening"')[1].split("</tr>")[0]
    assert format_amount(closing, "XOF") in page.text.split('id="closing"')[1].split("</tr>")[0]
    assert 'id="statement-csv"' in page.text and 'id="statement-print"' in page.text
    printable = await dashboard.get(f"{PAGE}/print{query}")
    assert printable.status_code == 200 and "Boutique" in printable.text
    assert printable.text.count("<tr>") >= 4  # every line under the figures
    download = await dashboard.get(f"{PAGE}/csv{query}")
    assert download.status_code == 200
    assert download.headers["content-type"].startswith("text/csv")
    assert f"releve-test-XOF-{month.name}.csv" in download.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(download.text)))
    assert [row["type"] for row in rows].count("payment") == 2
    assert all(Decimal(r["amount"]) - Decimal(r["fee"]) == Decimal(r["net"]) for r in rows)
    assert sum(Decimal(row["net"]) for row in rows) == closing - 5000
    assert Decimal(rows[-1]["balance_after"]) == closing
    # The earlier month: the top-up alone, its closing this month's opening.
    earlier_csv = await dashboard.get(f"{PAGE}/csv?month={earlier.name}&currency=XOF")
    [topup] = list(csv.DictReader(io.StringIO(earlier_csv.text)))
    assert (topup["type"], topup["net"], topup["balance_after"]) == ("topup", "5000", "5000")


async def test_statements_are_for_owners_and_finance_and_a_bad_month_is_said(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    other = dashboard.another()
    async with other:
        await other.signed_in_as(
            await make_member(runtime, merchant.id, "d@shop.example", "developer")
        )
        for address in (PAGE, f"{PAGE}/csv", f"{PAGE}/print", "/dashboard/statements"):
            refused = await other.get(address)
            assert refused.status_code == 403 and "relevés" in refused.text, address
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@shop.example", "owner"))
    for query in ("?month=2026-13", "?month=novembre", "?currency=EUR"):
        for address in (PAGE, f"{PAGE}/csv"):
            answer = await dashboard.get(address + query)
            assert answer.status_code == 422 and 'class="field-error"' in answer.text, query
    empty = await dashboard.get("/dashboard/statements?month=2020-01&currency=XAF")
    assert empty.status_code == 200 and "Aucun mouvement" in empty.text


@given(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2200, 12, 31)))
def test_months_follow_each_other(moment: datetime) -> None:
    month = Month.of(moment.replace(tzinfo=UTC))
    assert month.start <= moment.replace(tzinfo=UTC) < month.end
    assert month.next().previous() == month == month.previous().next()
    assert month.end - month.start in {timedelta(days=d) for d in (28, 29, 30, 31)}
    assert Month.parse(month.name) == month


async def test_a_period_s_payments_payouts_and_refunds_download_as_csv(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, dashboard: ConsoleClient
) -> None:
    merchant, _, _ = await _traffic(client, runtime, clock)
    other = await make_merchant(runtime, name="Autre")
    await pay(client, other, amount=700, external_id="ailleurs")
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "f@shop.example", "finance")
    )
    today = clock.now().date()
    for kind, count in (("payments", 2), ("payouts", 1), ("refunds", 1)):
        download = await dashboard.get(f"/dashboard/test/{kind}/csv?from={today}&to={today}")
        assert download.status_code == 200, (kind, download.text[:300])
        rows = list(csv.DictReader(io.StringIO(download.text)))
        assert len(rows) == count and {row["merchant_id"] for row in rows} == {merchant.id}, kind
    live = await dashboard.get(f"/dashboard/payments/csv?from={today}&to={today}")
    assert list(csv.DictReader(io.StringIO(live.text))) == []
    refused = await dashboard.get("/dashboard/test/payments/csv?from=hier")
    assert refused.status_code == 422
    exports = "SELECT count(*) FROM audit_log WHERE action = 'dashboard.export'"
    assert await scalar(runtime, exports) == 4


async def test_review_a_month_at_the_ends_of_the_calendar_is_refused_not_a_500(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    """Review finding 2: `9999-12` (its next month is year 10000) and `0001-01` (its previous
    is year 0) were 500s."""
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@shop.example", "owner"))
    for month in ("9999-12", "0001-01", "1969-12"):
        for address in (PAGE, f"{PAGE}/print", f"{PAGE}/csv"):
            answer = await dashboard.get(f"{address}?month={month}")
            assert answer.status_code == 422, (address, month, answer.status_code)


async def test_an_archived_month_is_refused_on_its_field_not_an_error_page(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    """Issue 29: a month whose postings left the database (`cauri archive`) has no statement
    here; the page says so on the month, and shows this month's."""
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@shop.example", "owner"))
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text(
                "INSERT INTO ledger_periods (month, closed_at, archived_at) "
                "VALUES ('2020-01-01', now(), now())"
            )
        )
    for address in (PAGE, f"{PAGE}/print", f"{PAGE}/csv"):
        answer = await dashboard.get(f"{address}?month=2020-01&currency=XOF")
        assert answer.status_code == 422, (address, answer.status_code)
        assert "2020-01 est archivé" in answer.text
