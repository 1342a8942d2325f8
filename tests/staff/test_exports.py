"""Issue 14, the CSV exports (cauri.staff.exports, `cauri export`): payments, payouts and
refunds of a period, streamed; their totals are the API's (its lists for the period, its
balance for what was settled)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.errors import InvalidRequest, NotFound
from cauri.kit.period import Period
from cauri.runtime import Runtime
from cauri.staff import exports
from cauri.staff.exports import ExportFilter
from cauri.worker.runner import Worker
from tests.foundation.builders import run_cli
from tests.payments.builders import set_platform_fees
from tests.payouts.builders import FAILS_LATER, REFUSED, STAYS_PENDING, SUCCEEDS
from tests.staff.traffic import API, pay, to_noon_tomorrow, traffic
from tests.support import MerchantKeys, make_merchant


async def _exported(runtime: Runtime, kind: str, wanted: ExportFilter) -> str:
    async with unit_of_work(runtime.sessionmaker) as session:
        return "".join([line async for line in getattr(exports, kind)(session, wanted)])


def _rows(exported: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(exported)))


async def _listed(
    client: httpx.AsyncClient, merchant: MerchantKeys, path: str, period: dict[str, str]
) -> list[dict[str, Any]]:
    """Every page of an API list."""
    found: list[dict[str, Any]] = []
    page = 1
    while True:
        response = await client.get(
            f"{API}/{path}",
            params=period | {"page": str(page), "per_page": "2"},
            headers=merchant.headers(),
        )
        body = response.json()
        found += body["data"]
        if page >= body["meta"]["last_page"]:
            return found
        page += 1


def _total(rows: list[dict[str, Any]], key: str) -> Decimal:
    return sum((Decimal(str(row[key])) for row in rows), Decimal(0))


async def test_totals_are_the_apis(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(exports, "BATCH", 2)  # several batches
    to_noon_tomorrow(clock)
    await set_platform_fees(runtime, percent="2")
    shop = await make_merchant(runtime, name="=Boutique Awa")
    other = await make_merchant(runtime)
    await pay(client, other, phone_number="22997990000", external_id="not-mine")
    made: dict[str, dict[str, Any]] = {}
    for name, amount, number in (
        ("first", 5000, "22997120000"),
        ("second", 3000, "22997130000"),
        ("pending", 2000, "22997140002"),
        ("refused", 1000, "22997150001"),
    ):
        clock.advance(seconds=1)
        made[name] = await pay(
            client, shop, amount=amount, phone_number=number, external_id=f"=cmd-{name}"
        )
    refund = await client.post(
        f"{API}/payments/{made['first']['reference']}/refund",
        json={"amount": 500},
        headers=shop.headers(),
    )
    assert refund.status_code == 201, refund.text
    for number in (SUCCEEDS, STAYS_PENDING, FAILS_LATER, REFUSED):
        clock.advance(seconds=1)
        await client.post(
            f"{API}/payouts",
            json={"amount": 1000, "phone_number": number, "operator": "mtn"},
            headers=shop.headers(),
        )
    clock.advance(runtime.settings.test_settle_delay)
    await worker.drain()  # FAILS_LATER fails: its debit is reversed

    day = clock.now().date().isoformat()
    period = {"from": day, "to": day}
    wanted = ExportFilter(Period.parse(day, day), shop.id, livemode=False)
    payments = _rows(await _exported(runtime, "payments", wanted))
    payouts = _rows(await _exported(runtime, "payouts", wanted))
    refunds = _rows(await _exported(runtime, "refunds", wanted))

    # The lists of the period: the same resources, the same amounts.
    for exported, path in ((payments, "payments"), (payouts, "payouts"), (refunds, "refunds")):
        listed = await _listed(client, shop, path, period)
        assert sorted(row["reference"] for row in exported) == sorted(
            str(row["reference"]) for row in listed
        )
        assert _total(exported, "amount") == _total(listed, "amount")
    assert _total(payments, "fee") == _total(
        await _listed(client, shop, "payments", period), "fee_amount"
    )
    assert [row["status"] for row in payouts] == ["succeeded", "pending", "failed", "failed"]

    # What was settled, credits less debits, is the balance.
    def settled(rows: list[dict[str, str]]) -> Decimal:
        return _total([row for row in rows if row["settled_at"]], "net")

    balance = (await client.get(f"{API}/balance", headers=shop.headers())).json()["data"][0]
    assert settled(payments) - settled(payouts) - settled(refunds) == balance["available"]
    pending = [row for row in payouts if row["status"] == "pending"]
    assert _total(pending, "net") == balance["pending_payouts"]
    assert [bool(row["settled_at"]) for row in payouts] == [True, True, False, False]
    assert [bool(row["settled_at"]) for row in payments] == [True, True, False, False]

    first = payments[0]
    assert first["reference"] == made["first"]["reference"]
    assert (first["amount"], first["fee"], first["net"]) == ("5000", "100", "5000")
    assert (first["total_amount"], first["amount_refunded"]) == ("5100", "500")
    assert first["phone_number"] == "2299712****"
    assert first["mode"] == "test" and first["currency"] == "XOF"
    # Text that a spreadsheet would run as a formula is defused.
    assert first["external_id"] == "'=cmd-first"
    assert first["merchant_name"] == "'=Boutique Awa"
    assert refunds[0]["external_id"] == "'=cmd-first"
    assert refunds[0]["payment"] == made["first"]["reference"]
    assert all(row["merchant_id"] == shop.id for row in payments + payouts + refunds)


async def test_an_instalment_settles_when_its_plan_releases(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    seen = await traffic(client, runtime, clock)
    day = seen.paid["created_at"][:10]
    wanted = ExportFilter(Period.parse(day, day), seen.shop.id, livemode=False)
    by_reference = {r["reference"]: r for r in _rows(await _exported(runtime, "payments", wanted))}
    # The plan still holds it in escrow: not in the balance yet.
    assert by_reference[seen.instalment]["settled_at"] == ""
    assert by_reference[seen.paid["reference"]]["settled_at"] != ""
    live = ExportFilter(Period.parse(day, day), None, livemode=True)
    assert [r["reference"] for r in _rows(await _exported(runtime, "payments", live))] == [
        seen.live["reference"]
    ]


async def test_a_period_is_required_and_the_merchant_known(runtime: Runtime) -> None:
    with pytest.raises(InvalidRequest):
        await _exported(runtime, "payouts", ExportFilter(Period.parse("2026-01-01", None)))
    with pytest.raises(NotFound):
        await _exported(
            runtime, "refunds", ExportFilter(Period.parse("2026-01-01", "2026-01-31"), "mer_x")
        )


async def test_export_cli(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, database_url: str
) -> None:
    seen = await traffic(client, runtime, clock)
    day = seen.paid["created_at"][:10]
    for kind in ("payments", "payouts", "refunds"):
        result = await run_cli(
            database_url, "export", kind, "--from", day, "--to", day, "--merchant", seen.shop.id
        )
        assert result.exit_code == 0, result.stderr
        wanted = ExportFilter(Period.parse(day, day), seen.shop.id)
        assert result.stdout == await _exported(runtime, kind, wanted)
    header = result.stdout.splitlines()[0].split(",")
    assert header == list(exports.REFUND_COLUMNS)
    missing = await run_cli(database_url, "export", "payments", "--from", day)
    assert missing.exit_code == 2  # --to is required
    unknown = await run_cli(
        database_url, "export", "payouts", "--from", day, "--to", day, "--merchant", "mer_x"
    )
    assert unknown.error()["code"] == "not_found" and unknown.stdout == ""
