"""Issue 14, the read pages in a real headless Chromium: finance signs in with a code, finds a
payment by the last digits of its number, opens it, runs the ledger's check and downloads an
export. The README's screenshots of these pages are taken here (docs/screenshots/)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, expect

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from tests.console.browsing import sign_in
from tests.console.builders import make_staff
from tests.console.screenshots import screenshot
from tests.console.test_console_browser import csp_violations as csp_violations
from tests.foundation.builders import open_live_mode
from tests.payouts.builders import SUCCEEDS, set_limits, top_up
from tests.staff.traffic import (
    A_NUMBER,
    API,
    OTHER_NUMBER,
    PENDING_NUMBER,
    REFUSED_NUMBER,
    pay,
    to_noon_tomorrow,
)
from tests.support import MerchantKeys, ServerThread, make_merchant

pytestmark = pytest.mark.browser


async def _todays_traffic(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> tuple[str, list[MerchantKeys]]:
    """Payments of two merchants in both modes, a refund, a payout held for approval, one
    payment stuck pending, all on one UTC day (tomorrow's). Returns the payment paid from
    A_NUMBER and the two merchants."""
    to_noon_tomorrow(clock)
    open_live_mode(runtime)
    shop = await make_merchant(runtime, name="Boutique Awa")
    other = await make_merchant(runtime, name="Kiosque Koffi")
    clock.advance(hours=-2)
    await pay(client, shop, phone_number=PENDING_NUMBER, external_id="cmd-attente")
    clock.advance(hours=2)
    paid = await pay(client, shop, amount=12_500, phone_number=A_NUMBER, external_id="cmd-42")
    for n, (amount, number) in enumerate(
        ((3000, OTHER_NUMBER), (1500, REFUSED_NUMBER), (8000, OTHER_NUMBER))
    ):
        await pay(client, other, amount=amount, phone_number=number, external_id=f"k-{n}")
    await pay(
        client, shop, live=True, amount=25_000, phone_number=OTHER_NUMBER, external_id="cmd-43"
    )
    refunded = await client.post(
        f"{API}/payments/{paid['reference']}/refund", json={"amount": 2500}, headers=shop.headers()
    )
    assert refunded.status_code == 201, refunded.text
    await set_limits(runtime, shop.id, approval_threshold=5000)
    await top_up(runtime, shop.id, 100_000, livemode=True)
    held = await client.post(
        f"{API}/payouts",
        json={"amount": 20_000, "phone_number": SUCCEEDS, "operator": "mtn"},
        headers=shop.headers(livemode=True),
    )
    assert held.json()["data"]["awaiting_approval"] is True, held.text
    return str(paid["reference"]), [shop, other]


async def _api_totals(
    client: httpx.AsyncClient, merchants: list[MerchantKeys], day: str
) -> dict[str, Decimal]:
    """What the merchants' own test keys see of the day's payments, summed as the export's
    columns are."""
    totals = dict.fromkeys(("amount", "fee", "net"), Decimal(0))
    for merchant in merchants:
        answer = await client.get(
            f"{API}/payments",
            params={"from": day, "to": day, "per_page": 100},
            headers=merchant.headers(),
        )
        assert answer.status_code == 200, answer.text
        for payment in answer.json()["data"]:
            totals["amount"] += Decimal(str(payment["amount"]))
            totals["fee"] += Decimal(str(payment["fee_amount"]))
            totals["net"] += Decimal(str(payment["net_amount"]))
    return totals


async def test_finance_finds_a_payment_checks_the_ledger_and_exports(
    page: Page,
    server: ServerThread,
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    csp_violations: list[str],
    tmp_path: Path,
) -> None:
    reference, merchants = await _todays_traffic(client, runtime, clock)
    finance = await make_staff(runtime, "fatou@cauri.example", "finance")
    await sign_in(page, server, finance)
    await expect(page.locator("#approvals-count")).to_have_text("1")
    await expect(page.locator("#stuck-count")).to_have_text("1")
    await expect(page.locator("#review-count")).to_have_text("0")
    await screenshot(page, "console-overview")

    menu = page.get_by_role("navigation", name="Menu de la console")
    await menu.get_by_role("link", name="Paiements").click()
    await page.get_by_label("Fin du numéro").fill(A_NUMBER[-6:])
    await page.get_by_role("button", name="Rechercher").click()
    results = page.get_by_role("table")
    await expect(results.get_by_role("caption")).to_have_text("Paiements trouvés : 1")
    await screenshot(page, "console-search")

    await results.get_by_role("link", name=reference).click()
    await expect(page.get_by_role("heading", level=1)).to_have_text(f"Paiement {reference}")
    await expect(page.locator("#ledger")).to_contain_text("operator:mtn:clearing:test:XOF")
    await screenshot(page, "console-payment")

    await menu.get_by_role("link", name="Grand livre").click()
    await page.get_by_role("button", name="Lancer la vérification").click()
    await expect(page.locator("#reconciliation-result")).to_contain_text("Réussie le")
    await screenshot(page, "console-ledger")

    await menu.get_by_role("link", name="Exports").click()
    today = clock.now().date().isoformat()
    await page.get_by_label("Données").select_option("payments")
    await page.get_by_label("Créé à partir du").fill(today)
    await page.get_by_label("Créé jusqu'au").fill(today)
    await page.get_by_label("Mode").select_option("test")
    async with page.expect_download() as started:
        await page.get_by_role("button", name="Télécharger le CSV").click()
    download = await started.value
    assert download.suggested_filename == f"cauri-payments-{today}-{today}-test.csv"
    saved = tmp_path / download.suggested_filename
    await download.save_as(saved)
    rows = list(csv.DictReader(io.StringIO(saved.read_text())))
    assert len(rows) == 5 and sum(int(row["amount"]) for row in rows) == 26_000
    exported = {
        column: sum(Decimal(row[column]) for row in rows) for column in ("amount", "fee", "net")
    }
    assert exported == await _api_totals(client, merchants, today)
    assert csp_violations == []
