"""Issue 28, bulk payouts on the dashboard in a real headless Chromium at a phone's width
(375 px): a finance member opens « Transferts groupés » from the menu in test mode, sends a
small CSV file, sees its batch with its items, one refused and saying why, then follows the
other to its payout once the worker has made it."""

from __future__ import annotations

import pytest
from playwright.async_api import Page, expect

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.console.browsing import sign_in
from tests.console.builders import make_member
from tests.console.test_actions import catch_up
from tests.console.test_money_approvals_browser import PHONE, fits
from tests.dashboard.test_payout_batches import rows
from tests.payouts.builders import top_up
from tests.support import ServerThread, make_merchant

pytestmark = pytest.mark.browser
SHOP = "Boutique Awa"


async def test_a_csv_file_sent_from_a_phone_is_a_batch_shown_with_its_items(
    page: Page, server: ServerThread, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime, name=SHOP)
    await top_up(runtime, merchant.id, 10_000)
    finance = await make_member(runtime, merchant.id, "fin@boutique.example", "finance")
    await page.set_viewport_size(PHONE)
    await sign_in(page, server, finance, "/dashboard", SHOP)
    await page.locator("#to-test").click()
    await (
        page.get_by_role("navigation", name="Menu du tableau de bord")
        .get_by_role("link", name="Transferts groupés")
        .click()
    )
    await expect(page.get_by_role("heading", level=1)).to_have_text("Transferts groupés de test")
    assert await fits(page)
    await page.get_by_label("Fichier CSV").set_input_files(
        files=[{"name": "paie.csv", "mimeType": "text/csv", "buffer": rows(1500, -5)}]
    )
    await page.get_by_role("button", name="Envoyer les transferts").click()
    await expect(page.locator("#action-done")).to_contain_text("Fichier reçu")
    items = page.locator("#items tbody tr")
    await expect(items).to_have_count(2)
    await expect(items.nth(0)).to_contain_text("p-0")
    await expect(items.nth(1)).to_contain_text("Refusé (invalid_request)")
    assert await fits(page)

    catch_up(clock)
    await worker.drain()
    await page.reload()
    await expect(page.locator("#batch-status")).to_contain_text("terminé")
    await expect(page.locator("#batch-counts")).to_contain_text("1 réussis")
    await items.nth(0).get_by_role("link").click()
    await expect(page.get_by_role("heading", level=1)).to_contain_text("pyo_")
