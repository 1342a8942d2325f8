"""Issue 26 in a real headless Chromium at 375 px: a live payout under maker-checker (finance
asks, the draft waits, an owner approves in another browser), the month's statement whose
closing balance is the API's, a role refused, a forged form refused, another merchant's
payment a 404; then a key made, used on the API and revoked (401), and a webhook endpoint set
from the page receiving a test event. Screenshots: dashboard-drafts, dashboard-statement."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import Page, expect

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.money import format_amount
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.console.browsing import second_page as second_page
from tests.console.browsing import sign_in
from tests.console.builders import make_member
from tests.console.screenshots import screenshot
from tests.console.test_actions import catch_up
from tests.console.test_money_approvals_browser import PHONE, fits
from tests.foundation.builders import open_live_mode
from tests.payouts.builders import set_payout_account, top_up
from tests.staff.traffic import pay
from tests.support import ServerThread, make_merchant
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.browser
SHOP = "Boutique Awa"


async def test_a_live_payout_under_maker_checker_and_the_statement(
    page: Page,
    second_page: Page,
    server: ServerThread,
    runtime: Runtime,
    client: httpx.AsyncClient,
) -> None:
    assert server.runtime is not None
    open_live_mode(server.runtime)
    merchant = await make_merchant(runtime, name=SHOP)
    other = await make_merchant(runtime, name="Autre")
    elsewhere = await pay(client, other, amount=1000, external_id="ailleurs")
    await top_up(runtime, merchant.id, 100_000, livemode=True)
    await set_payout_account(runtime, merchant.id, "22997110000", validated=True)
    async with unit_of_work(runtime.sessionmaker) as session:
        (await merchants.get(session, merchant.id)).team_approval_above = 10_000
    finance = await make_member(runtime, merchant.id, "fin@boutique.example", "finance")
    owner = await make_member(runtime, merchant.id, "awa@boutique.example", "owner")

    await page.set_viewport_size(PHONE)
    await sign_in(page, server, finance, "/dashboard", SHOP)
    await page.goto(f"{server.base_url}/dashboard/payouts/new")
    await expect(page.locator("#threshold-note")).to_be_visible()
    await page.get_by_label("Montant reçu par le bénéficiaire").fill("25000")
    await page.get_by_label("Motif (facultatif)").fill("Loyer de novembre")
    await page.get_by_role("button", name="Demander le transfert").click()
    await expect(page.locator("#action-done")).to_contain_text("second membre")
    assert await fits(page)
    await screenshot(page, "dashboard-drafts")

    await second_page.set_viewport_size(PHONE)
    await sign_in(second_page, server, owner, "/dashboard", SHOP)
    await expect(second_page.locator("#alert-drafts")).to_be_visible()
    await second_page.locator("#alert-drafts a").click()
    await second_page.get_by_role("button", name="Approuver").click()
    await expect(second_page.locator("#action-done")).to_contain_text("approuvé")
    live = merchant.headers(True)
    [payout] = (await client.get("/api/v1/payouts", headers=live)).json()["data"]
    assert (payout["status"], payout["amount"]) == ("succeeded", 25000)

    balance = (await client.get("/api/v1/balance", headers=live)).json()["data"]
    [xof] = [b for b in balance if b["currency"] == "XOF"]
    await second_page.get_by_role("link", name="Relevés").click()
    closing = second_page.locator("#closing")
    await expect(closing).to_contain_text(format_amount(int(xof["available"]), "XOF"))
    await expect(second_page.locator("#total-payout")).to_contain_text("1")
    assert await fits(second_page)
    await screenshot(second_page, "dashboard-statement")

    # A role refused, a forged form refused, another merchant's payment a 404.
    await page.goto(f"{server.base_url}/dashboard/team")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Action refusée")
    await page.goto(f"{server.base_url}/dashboard/payouts/new")
    forged = "input => input.value = 'forged'"
    await page.locator('#payout-form input[name="csrf"]').evaluate(forged)
    await page.get_by_label("Montant reçu par le bénéficiaire").fill("500")
    await page.get_by_role("button", name="Demander le transfert").click()
    await expect(page.locator("main")).to_contain_text("ne vient pas de l'espace marchand")
    await page.goto(f"{server.base_url}/dashboard/test/payments/{elsewhere['reference']}")
    await expect(page.locator("main")).to_contain_text("introuvable")
    assert len((await client.get("/api/v1/payouts", headers=live)).json()["data"]) == 1


async def test_a_key_made_used_and_revoked_and_a_webhook_test_event_received(
    page: Page,
    server: ServerThread,
    runtime: Runtime,
    client: httpx.AsyncClient,
    clock: ManualClock,
    worker: Worker,
) -> None:
    merchant = await make_merchant(runtime, name=SHOP)
    owner = await make_member(runtime, merchant.id, "awa@boutique.example", "owner")
    await page.set_viewport_size(PHONE)
    await sign_in(page, server, owner, "/dashboard", SHOP)
    await page.goto(f"{server.base_url}/dashboard/test/developers")
    await page.get_by_role("button", name="Créer une clé").click()
    key = await page.locator("#new-key").inner_text()
    bearer = {"Authorization": f"Bearer {key}"}
    assert (await client.get("/api/v1/payments", headers=bearer)).status_code == 200
    hint = key[-4:]
    row = page.locator("tr", has_text=hint)
    await row.get_by_role("button", name="Révoquer").click()
    await expect(page.locator("tr", has_text=hint).get_by_role("button")).to_have_count(0)
    assert (await client.get("/api/v1/payments", headers=bearer)).status_code == 401

    with Receiver() as receiver:
        await page.get_by_label("Adresse des notifications").fill(receiver.url)
        await page.get_by_role("button", name="Enregistrer l'adresse").click()
        await expect(page.locator("#action-done")).to_be_visible()
        await page.get_by_role("button", name="Envoyer un événement de test").click()
        await expect(page.locator("#action-done")).to_contain_text("Événement de test envoyé")
        catch_up(clock)
        await worker.drain()
        [arrived] = await receiver.wait_for(1)
        assert b"webhook.test" in arrived.body
    assert await fits(page)
