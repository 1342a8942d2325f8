"""Issue 23, item 6, in a real headless Chromium at a phone's width (375 px): a finance
member asks for a live credit above the platform's dual-approval amount from the merchant's
page; it waits on the approvals page ("Opérations à approuver"), where she may not approve
it herself; another finance member approves it and the balance is credited."""

from __future__ import annotations

import pytest
from playwright.async_api import Page, expect

from cauri.runtime import Runtime
from tests.console.browsing import second_page as second_page
from tests.console.browsing import sign_in
from tests.console.builders import make_staff
from tests.payments.builders import merchant_available
from tests.payouts.test_maker_checker import dual_above
from tests.support import ServerThread, make_merchant

pytestmark = pytest.mark.browser

PHONE = {"width": 375, "height": 740}


async def fits(page: Page) -> bool:
    """Nothing wider than the screen but what scrolls in its own box (.table-wrap)."""
    width: bool = await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    return width


async def test_a_live_credit_above_the_amount_is_approved_by_a_second_person(
    page: Page, second_page: Page, server: ServerThread, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime, name="Boutique Awa")
    await dual_above(runtime, 10_000)
    awa = await make_staff(runtime, "awa@cauri.example", "finance")
    binta = await make_staff(runtime, "binta@cauri.example", "finance")
    for opened in (page, second_page):
        await opened.set_viewport_size(PHONE)

    await sign_in(page, server, awa)
    await page.goto(f"{server.base_url}/console/merchants/{merchant.id}")
    await page.get_by_label("Montant (dans l'unité de la devise)").fill("50 000")
    await page.get_by_label("Mode").select_option("live")
    await page.get_by_label("Motif (le virement reçu)").fill("virement BOA 2611")
    await page.get_by_role("button", name="Créditer").click()
    await expect(page.get_by_role("status")).to_contain_text("Crédit demandé")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0

    await page.goto(f"{server.base_url}/console/approvals")
    operations = page.locator("#operations tbody tr")
    await expect(operations).to_have_count(1)
    await expect(operations).to_contain_text("Crédit du solde")
    await expect(operations).to_contain_text("50 000 XOF")
    await expect(operations).to_contain_text("Vous l'avez demandée")
    assert await fits(page)
    await operations.get_by_role("button", name="Approuver").click()
    await expect(page.get_by_role("alert")).to_contain_text("une autre personne")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0

    await sign_in(second_page, server, binta)
    await second_page.goto(f"{server.base_url}/console/approvals")
    row = second_page.locator("#operations tbody tr")
    await expect(row).to_contain_text("awa@cauri.example")
    await row.get_by_label("Note (facultative)").fill("relevé vérifié")
    await row.get_by_role("button", name="Approuver").click()
    await expect(second_page.locator("#operation-done")).to_have_text(
        "Opération approuvée : elle est faite."
    )
    await expect(second_page.locator("#operations")).to_contain_text(
        "Aucune opération n'attend d'approbation."
    )
    assert await merchant_available(runtime, merchant.id, livemode=True) == 50_000
