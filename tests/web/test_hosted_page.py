"""The hosted card page in a real headless Chromium, as a customer uses it: the page is
served over real HTTP, the customer clicks, and lands on the merchant's return page."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, expect

from cauri.runtime import Runtime
from cauri.web.rendering import format_amount
from tests.support import make_merchant
from tests.web.builders import create_card_payment, events_of, ledger_transactions_of
from tests.web.receiver import ReturnPage

pytestmark = pytest.mark.browser


async def test_paying_lands_on_return_url_and_succeeds(
    page: Page,
    http: httpx.AsyncClient,
    runtime: Runtime,
    return_page: ReturnPage,
    tmp_path: Path,
) -> None:
    merchant = await make_merchant(runtime, name="Boutique Awa")
    payment = await create_card_payment(
        http,
        merchant,
        amount=12500,
        external_id="commande-42",
        description="Panier du 3 mars",
        return_url=f"{return_page.url}?commande=42",
    )
    reference = payment["reference"]

    response = await page.goto(payment["payment_url"])
    assert response is not None and response.status == 200
    total = format_amount(int(payment["total_amount"]), "XOF")
    await expect(page).to_have_title(f"Paiement {payment['identifier']} · Cauri")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Paiement à Boutique Awa")
    await expect(page.locator("#total")).to_have_text(total)
    await expect(page.locator("#identifier")).to_have_text(payment["identifier"])
    await expect(page.get_by_text("commande-42")).to_be_visible()
    await expect(page.get_by_text("Panier du 3 mars")).to_be_visible()
    await expect(page.get_by_role("note")).to_contain_text("Mode test")
    await expect(page.get_by_role("note")).to_contain_text("aucune carte n'est débitée")
    screenshot = tmp_path / "hosted-page.png"
    await page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.read_bytes().startswith(b"\x89PNG") and screenshot.stat().st_size > 5_000

    await page.get_by_role("button", name=f"Payer {total}").click()
    await page.wait_for_url(f"{return_page.url}?**")
    await expect(page.get_by_role("heading")).to_have_text("Merci pour votre commande")
    assert return_page.visits == [
        {"commande": ["42"], "reference": [reference], "status": ["succeeded"]}
    ]

    fetched = await http.get(f"/api/v1/payments/{reference}", headers=merchant.headers())
    assert fetched.json()["data"]["status"] == "succeeded"
    assert await events_of(runtime, reference) == ["payment.succeeded"]
    assert await ledger_transactions_of(runtime, reference) == 1


async def test_refusing_fails_the_payment_and_moves_no_money(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant = await make_merchant(runtime)
    payment = await create_card_payment(http, merchant, return_url=return_page.url)
    reference = payment["reference"]

    await page.goto(payment["payment_url"])
    await page.get_by_role("button", name="Refuser le paiement").click()
    await page.wait_for_url(f"{return_page.url}?**")
    assert return_page.visits == [{"reference": [reference], "status": ["failed"]}]

    fetched = await http.get(f"/api/v1/payments/{reference}", headers=merchant.headers())
    assert fetched.json()["data"]["status"] == "failed"
    assert await events_of(runtime, reference) == ["payment.failed"]
    assert await ledger_transactions_of(runtime, reference) == 0


async def test_revisiting_after_the_outcome_shows_it_and_refuses_a_second_decision(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant = await make_merchant(runtime)
    payment = await create_card_payment(http, merchant, return_url=return_page.url)
    reference = payment["reference"]
    await page.goto(payment["payment_url"])
    await page.get_by_role("button", name="Payer").click()
    await page.wait_for_url(f"{return_page.url}?**")

    await page.goto(payment["payment_url"])
    await expect(page.get_by_role("status")).to_have_text("Ce paiement est réussi.")
    await expect(page.get_by_role("button")).to_have_count(0)
    await expect(page.get_by_role("note")).to_have_count(0)
    back = page.get_by_role("link", name="Retourner sur le site de Boutique")
    await expect(back).to_have_attribute(
        "href", f"{return_page.url}?reference={reference}&status=succeeded"
    )

    # The back button and a resubmitted form: refused, in HTML, and nothing changes.
    again = await http.post(f"/pay/{reference}", data={"outcome": "failed"})
    assert again.status_code == 409
    assert again.headers["content-type"].startswith("text/html")
    assert "Ce paiement est déjà réussi." in again.text
    fetched = await http.get(f"/api/v1/payments/{reference}", headers=merchant.headers())
    assert fetched.json()["data"]["status"] == "succeeded"
    assert await events_of(runtime, reference) == ["payment.succeeded"]
    assert await ledger_transactions_of(runtime, reference) == 1


async def test_unknown_reference_is_an_html_404_page(page: Page, http: httpx.AsyncClient) -> None:
    response = await page.goto(f"{http.base_url}/pay/00000000-0000-4000-8000-000000000000")
    assert response is not None and response.status == 404
    await expect(page.get_by_role("heading", level=1)).to_have_text("Paiement introuvable")
    await expect(page.get_by_role("alert")).to_have_text(
        "Ce lien de paiement ne correspond à aucun paiement."
    )
    await expect(page.get_by_role("button")).to_have_count(0)
