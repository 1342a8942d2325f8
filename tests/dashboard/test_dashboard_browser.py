"""Issue 26 in a real headless Chromium at a phone's width (375 px): an owner's invitation
accepted (a password, the TOTP enrollment), the live and test homes, a test payment found
and refunded in part from its page, a test key made. The README's screenshots of the
dashboard are taken here (docs/screenshots/dashboard-*.png)."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pyotp
import pytest
from playwright.async_api import Page, expect

from cauri.runtime import Runtime
from tests.console.builders import NEW_PASSWORD, cli
from tests.console.screenshots import screenshot
from tests.console.test_money_approvals_browser import PHONE, fits
from tests.staff.traffic import pay
from tests.support import ServerThread, make_merchant

pytestmark = pytest.mark.browser


async def test_an_owner_invited_signs_in_refunds_a_payment_and_makes_a_key(
    page: Page,
    server: ServerThread,
    runtime: Runtime,
    client: httpx.AsyncClient,
    database_url: str,
) -> None:
    merchant = await make_merchant(runtime, name="Boutique Awa")
    payment = await pay(client, merchant, amount=5000, external_id="commande-17")
    args = ("merchants", "invite", merchant.id, "--email", "awa@boutique.example", "--json")
    link = (await cli(database_url, *args)).json()["link"]
    await page.set_viewport_size(PHONE)
    await page.goto(server.base_url + urlsplit(link).path)
    await expect(page.get_by_role("heading", level=1)).to_have_text("Bienvenue")
    assert await fits(page)
    await page.get_by_label("Nouveau mot de passe").fill(NEW_PASSWORD)
    await page.get_by_label("Confirmez le mot de passe").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Enregistrer le mot de passe").click()
    await expect(page).to_have_url(f"{server.base_url}/dashboard/two-factor")
    secret = (await page.locator("#totp-secret").inner_text()).replace(" ", "")
    await page.get_by_label("Code à six chiffres").fill(pyotp.TOTP(secret).now())
    await page.get_by_role("button", name="Activer et se connecter").click()

    await expect(page).to_have_url(f"{server.base_url}/dashboard/")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Boutique Awa")
    assert await fits(page)
    [cookie] = [c for c in await page.context.cookies() if c["name"] == "cauri_dashboard"]
    assert cookie["path"] == "/dashboard" and cookie["httpOnly"] and cookie["secure"]
    await page.get_by_role("link", name="Test", exact=True).click()
    await expect(page.locator("#test-mode")).to_be_visible()
    await screenshot(page, "dashboard-home")

    await page.set_viewport_size(PHONE)
    await page.get_by_role("link", name="Paiements").click()
    await page.get_by_label("Référence du marchand (external_id)").fill("commande-17")
    await page.get_by_role("button", name="Rechercher").click()
    await page.get_by_role("link", name=payment["reference"]).click()
    await expect(page).to_have_url(
        f"{server.base_url}/dashboard/test/payments/{payment['reference']}"
    )
    assert await fits(page)
    await page.get_by_label("Montant (XOF)").fill("1500")
    await page.get_by_label("Motif (facultatif)").fill("Article retourné")
    await page.get_by_role("button", name="Rembourser").click()
    await expect(page.locator("#action-done")).to_be_visible()
    await expect(page.locator("#status")).to_have_text("réussi")
    await screenshot(page, "dashboard-payment")

    await page.set_viewport_size(PHONE)
    await page.get_by_role("link", name="Développeurs").click()
    await page.get_by_role("button", name="Créer une clé").click()
    key = await page.locator("#new-key").inner_text()
    assert key.startswith("sk_test_")
    answer = await client.get("/api/v1/payments", headers={"Authorization": f"Bearer {key}"})
    assert answer.status_code == 200
    assert await fits(page)
