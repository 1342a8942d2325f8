"""The checkout page in a real headless Chromium, as a customer uses it on a phone (375 px
wide, in French): the session is opened over real HTTP, the customer picks a mode, types a
number as people do, pays, and goes back to the merchant's return page."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.web.rendering import format_amount
from tests.checkout.builders import fetch, open_session
from tests.checkout.screenshots import PHONE_WIDTH, screenshot
from tests.support import MerchantKeys, make_merchant
from tests.web.conftest import browser as browser
from tests.web.conftest import http as http
from tests.web.conftest import page as page
from tests.web.conftest import return_page as return_page
from tests.web.conftest import server as server
from tests.web.receiver import ReturnPage

pytestmark = pytest.mark.browser

PHONE: ViewportSize = {"width": PHONE_WIDTH, "height": 740}
AMOUNT = format_amount(5000, "XOF")  # builders.session_body's amount
ATTEMPT = re.compile(r"/checkout/cs_[^/]+/attempts/[^/?]+$")


async def open_checkout(
    runtime: Runtime, http: httpx.AsyncClient, return_page: ReturnPage, **overrides: Any
) -> tuple[MerchantKeys, dict[str, Any]]:
    """A merchant, and a session of theirs (in Benin unless said) that ends on the real
    return page."""
    merchant = await make_merchant(runtime, name="Boutique Awa")
    body = {"country": "BJ", "return_url": return_page.url} | overrides
    checkout = await open_session(http, merchant, **body)
    return merchant, checkout


async def visit(page: Page, checkout: dict[str, Any], status: int = 200) -> None:
    """Opens the session's page on a phone."""
    await page.set_viewport_size(PHONE)
    response = await page.goto(checkout["url"])
    assert response is not None and response.status == status


async def assert_no_horizontal_scroll(page: Page) -> None:
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE_WIDTH, f"the page is {width} px wide at {PHONE_WIDTH} px"


async def choose(page: Page, mode: str) -> None:
    await page.get_by_role("button", name=mode, exact=True).click()
    await expect(page.get_by_role("heading", level=2)).to_have_text(mode)


async def pay_by_push(page: Page, mode: str, number: str, amount: str = AMOUNT) -> str:
    """Types the number into the mode's form and pays; returns the attempt's reference."""
    await choose(page, mode)
    await page.get_by_label(f"Numéro {mode}").fill(number)
    await page.get_by_role("button", name=f"Payer {amount}").click()
    await expect(page).to_have_url(ATTEMPT)
    return page.url.rsplit("/", 1)[1]


async def test_a_mobile_money_push_pays_and_goes_back_to_the_merchant(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant, checkout = await open_checkout(runtime, http, return_page)
    reference = checkout["reference"]

    await visit(page, checkout)
    await expect(page).to_have_title("Paiement à Boutique Awa · Cauri")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Paiement à Boutique Awa")
    await expect(page.locator("#amount")).to_have_text(AMOUNT)
    await expect(page.get_by_text("Commande 1042")).to_be_visible()
    await expect(page.get_by_role("note")).to_contain_text("Mode test")
    await expect(page.get_by_role("note")).to_contain_text("aucun argent ne circule")
    await expect(page.get_by_role("combobox", name="Pays")).to_have_value("BJ")
    await expect(page.get_by_role("button", name="MTN Mobile Money Bénin")).to_be_visible()
    await assert_no_horizontal_scroll(page)
    await screenshot(page, "choice")

    await choose(page, "MTN Mobile Money Bénin")
    number = page.get_by_label("Numéro MTN Mobile Money Bénin")
    await expect(number).to_have_accessible_description("Avec ou sans l'indicatif +229.")
    await expect(page.locator("#test-numbers")).to_contain_text("…0000 : réussi aussitôt")
    await assert_no_horizontal_scroll(page)
    await number.fill("97 00 00 00")
    await page.get_by_role("button", name=f"Payer {AMOUNT}").click()

    await expect(page).to_have_url(ATTEMPT)
    paid = page.url.rsplit("/", 1)[1]
    await expect(page.get_by_role("status")).to_have_text("Paiement réussi. Merci !")
    await expect(page.locator("#number")).to_have_text("2299700****")
    await expect(page.locator("main")).not_to_contain_text("22997000000")
    await expect(page.locator("dd.total")).to_have_text(AMOUNT)
    await assert_no_horizontal_scroll(page)
    await screenshot(page, "receipt")

    await page.get_by_role("link", name="Retourner sur le site de Boutique Awa").click()
    await page.wait_for_url(f"{return_page.url}?**")
    await expect(page.get_by_role("heading")).to_have_text("Merci pour votre commande")
    assert return_page.visits == [{"checkout_session": [reference]}]

    found = await fetch(http, merchant, reference)
    assert found["status"] == "complete"
    assert (found["payment"], found["attempts"]) == (paid, [paid])


async def test_a_refusal_then_another_mode_completes_the_session(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant, checkout = await open_checkout(runtime, http, return_page)
    await visit(page, checkout)

    refused = await pay_by_push(page, "MTN Mobile Money Bénin", "97 00 00 01")
    await expect(page.get_by_role("alert")).to_have_text(
        "L'opérateur a refusé l'opération dès la demande."
    )
    await expect(page.get_by_role("link", name="Retourner sur le site")).to_have_count(0)
    await page.get_by_role("link", name="Réessayer").click()
    await expect(page.get_by_role("heading", name="Choisissez comment payer")).to_be_visible()

    paid = await pay_by_push(page, "Moov Money Bénin", "+229 97 00 00 00")
    await expect(page.get_by_role("status")).to_have_text("Paiement réussi. Merci !")
    await expect(page.locator("#number")).to_have_text("2299700****")
    await expect(
        page.get_by_role("link", name="Retourner sur le site de Boutique Awa")
    ).to_be_visible()

    found = await fetch(http, merchant, checkout["reference"])
    assert found["status"] == "complete"
    assert (found["payment"], found["attempts"]) == (paid, [refused, paid])


async def test_a_pending_attempt_shows_the_success_once_decided(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant, checkout = await open_checkout(runtime, http, return_page)
    await visit(page, checkout)

    pending = await pay_by_push(page, "MTN Mobile Money Bénin", "97000002")
    await expect(page.get_by_role("status")).to_have_text(
        "Validez le paiement sur votre téléphone (2299700****)."
    )
    await expect(page.get_by_role("link", name="Essayer autrement")).to_be_visible()
    # Its script asks for the outcome (the page's own refresh is for browsers without one).
    await expect(page.locator("[data-status-url]")).to_have_count(1)

    decided = await http.post(
        f"/api/v1/test-helpers/payments/{pending}/succeed", headers=merchant.headers()
    )
    assert decided.status_code == 200, decided.text
    # The page's script asks every 2 s and shows the outcome.
    await expect(page.get_by_role("status")).to_have_text(
        "Paiement réussi. Merci !", timeout=15_000
    )
    await expect(page).to_have_url(ATTEMPT)
    await expect(page.get_by_role("link", name="Essayer autrement")).to_have_count(0)
    await expect(
        page.get_by_role("link", name="Retourner sur le site de Boutique Awa")
    ).to_be_visible()
    assert (await fetch(http, merchant, checkout["reference"]))["status"] == "complete"
    # The receipt shown, the customer goes on to the merchant by themselves (8 s).
    await page.wait_for_url(f"{return_page.url}?**", timeout=20_000)
    assert return_page.visits == [{"checkout_session": [checkout["reference"]]}]


async def test_a_card_is_paid_on_cauri_s_card_page_and_comes_back(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant, checkout = await open_checkout(runtime, http, return_page)
    await visit(page, checkout)

    await choose(page, "Carte VISA")
    await expect(page.get_by_label(re.compile("^Numéro"))).to_have_count(0)
    await assert_no_horizontal_scroll(page)
    await page.get_by_label("Prénom du titulaire", exact=True).fill("Awa")
    await page.get_by_label("Nom du titulaire", exact=True).fill("Diallo")
    await page.get_by_label("E-mail", exact=True).fill("awa@example.com")
    await page.get_by_role("button", name=f"Payer {AMOUNT}").click()

    await expect(page).to_have_url(re.compile(r"/pay/[^/]+$"))
    await expect(page.get_by_text("Awa Diallo")).to_be_visible()
    await page.get_by_role("button", name=re.compile(r"^Payer ")).click()

    await expect(page).to_have_url(ATTEMPT)
    paid = page.url.rsplit("/", 1)[1]
    await expect(page.get_by_role("status")).to_have_text("Paiement réussi. Merci !")
    await expect(page.get_by_text("Carte VISA")).to_be_visible()
    found = await fetch(http, merchant, checkout["reference"])
    assert (found["status"], found["payment"]) == ("complete", paid)


async def test_an_expired_session_says_so(
    page: Page,
    http: httpx.AsyncClient,
    runtime: Runtime,
    return_page: ReturnPage,
    clock: ManualClock,
) -> None:
    _, checkout = await open_checkout(runtime, http, return_page, expires_in=300)
    clock.advance(301)  # the served app's clock runs from the test's

    await visit(page, checkout, status=410)
    await expect(page.get_by_role("alert")).to_have_text(
        "Cette page de paiement a expiré. Demandez un nouveau lien au marchand."
    )
    await expect(page.get_by_role("button")).to_have_count(0)
    await assert_no_horizontal_scroll(page)


async def test_a_number_of_another_country_is_refused_next_to_its_field(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant, checkout = await open_checkout(runtime, http, return_page)
    await visit(page, checkout)
    await choose(page, "MTN Mobile Money Bénin")
    number = page.get_by_label("Numéro MTN Mobile Money Bénin")
    await number.fill("+225 07 00 00 00 00")
    await page.get_by_role("button", name=f"Payer {AMOUNT}").click()

    await expect(page.get_by_role("alert")).to_have_text("Vérifiez les champs signalés.")
    await expect(number).to_have_attribute("aria-invalid", "true")
    await expect(number).to_have_value("+225 07 00 00 00 00")
    await expect(page.locator("#phone_number-error")).to_contain_text("indicatif 229")
    await expect(number).to_have_accessible_description(re.compile("indicatif 229"))
    await assert_no_horizontal_scroll(page)
    found = await fetch(http, merchant, checkout["reference"])
    assert (found["status"], found["attempts"]) == ("open", [])


async def test_the_operator_is_predicted_as_the_customer_types(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    _, checkout = await open_checkout(runtime, http, return_page)
    await visit(page, checkout)
    await page.get_by_label("Votre numéro (facultatif)").fill("01 95 00 00 00")
    await expect(page.locator("#prediction")).to_have_text("Probablement : Moov Money Bénin")
    predicted = page.locator("button.mode.predicted")
    await expect(predicted).to_have_text("Moov Money Bénin")
    await expect(page.locator("button.mode").first).to_have_text("Moov Money Bénin")
    await predicted.click()
    await expect(page.get_by_label("Numéro Moov Money Bénin")).to_have_value("01 95 00 00 00")


async def test_without_javascript_the_page_still_pays(
    browser: Browser, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant, checkout = await open_checkout(runtime, http, return_page)
    context = await browser.new_context(locale="fr-FR", java_script_enabled=False)
    try:
        page = await context.new_page()
        page.set_default_timeout(15_000)
        await visit(page, checkout)
        pending = await pay_by_push(page, "MTN Mobile Money Bénin", "97000002")
        await expect(page.get_by_role("status")).to_contain_text("Validez le paiement")
        decided = await http.post(
            f"/api/v1/test-helpers/payments/{pending}/succeed", headers=merchant.headers()
        )
        assert decided.status_code == 200, decided.text
        # The page's own refresh (every 3 s) shows the outcome.
        await expect(page.get_by_role("status")).to_have_text(
            "Paiement réussi. Merci !", timeout=15_000
        )
    finally:
        await context.close()


async def test_a_link_without_an_amount_opens_a_session_for_what_the_customer_types(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant = await make_merchant(runtime, name="Club Awa")
    made = await http.post(
        "/api/v1/payment-links",
        json={"description": "Don au club", "amount": None, "min_amount": 500},
        headers=merchant.headers(),
    )
    assert made.status_code == 201, made.text
    await page.set_viewport_size(PHONE)
    response = await page.goto(made.json()["data"]["url"])
    assert response is not None and response.status == 200
    await expect(page.get_by_role("heading", level=1)).to_have_text("Paiement à Club Awa")
    amount = page.get_by_label("Montant (XOF)")
    await expect(amount).to_have_accessible_description(f"Au moins {format_amount(500, 'XOF')}.")
    await assert_no_horizontal_scroll(page)
    await screenshot(page, "link")
    await amount.fill("100")
    await page.get_by_role("button", name="Continuer").click()
    await expect(page.locator("#amount-error")).to_contain_text("au moins 500")
    await expect(page.get_by_label("Montant (XOF)")).to_have_value("100")
    await page.get_by_label("Montant (XOF)").fill("2 500")
    await page.get_by_role("button", name="Continuer").click()
    await expect(page).to_have_url(re.compile(r"/checkout/cs_[^/]+$"))
    await expect(page.locator("#amount")).to_have_text(format_amount(2500, "XOF"))
    await pay_by_push(page, "MTN Mobile Money Bénin", "97000000", format_amount(2500, "XOF"))
    await expect(page.get_by_role("status")).to_have_text("Paiement réussi. Merci !")


async def test_a_mode_that_needs_a_code_asks_for_it_with_how_to_get_it(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    _, checkout = await open_checkout(runtime, http, return_page, country="SN")
    await visit(page, checkout)
    await choose(page, "Orange Money Sénégal")
    code = page.get_by_label("Code de paiement")
    await expect(code).to_have_accessible_description(re.compile("Orange Money.*code secret"))
    await page.get_by_label("Numéro Orange Money Sénégal").fill("77 000 00 00")
    await page.get_by_role("button", name=f"Payer {AMOUNT}").click()
    await expect(page.locator("#otp-error")).to_be_visible()  # the code is required
    await page.get_by_label("Code de paiement").fill("123456")
    await page.get_by_role("button", name=f"Payer {AMOUNT}").click()
    await expect(page).to_have_url(ATTEMPT)
    await expect(page.get_by_role("status")).to_have_text("Paiement réussi. Merci !")


async def test_an_operator_s_own_page_is_played_in_test_mode_there_and_back(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant, checkout = await open_checkout(runtime, http, return_page, country="SN")
    await visit(page, checkout)
    await choose(page, "Wave Sénégal")
    await page.get_by_label("Numéro Wave Sénégal").fill("77 123 45 67")
    await page.get_by_role("button", name=f"Payer {AMOUNT}").click()
    await expect(page).to_have_url(re.compile(r"/pay/[^/]+$"))
    await expect(page.get_by_role("note")).to_contain_text("cette page joue celle de Wave Sénégal")
    await page.get_by_role("button", name=f"Payer {AMOUNT}").click()
    await expect(page).to_have_url(ATTEMPT)
    await expect(page.get_by_role("status")).to_have_text("Paiement réussi. Merci !")
    assert (await fetch(http, merchant, checkout["reference"]))["status"] == "complete"


async def test_a_plan_s_instalment_is_chosen_within_its_bounds(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    merchant = await make_merchant(runtime, name="Boutique Awa")
    plan = await http.post(
        "/api/v1/installment-plans", json={"target_amount": 50_000}, headers=merchant.headers()
    )
    assert plan.status_code == 201, plan.text
    checkout = await open_session(
        http, merchant, plan=plan.json()["data"]["reference"], amount=None, country="BJ"
    )
    await visit(page, checkout)
    await expect(page.locator("#plan-progress")).to_have_text(
        f"Plan de paiement : {format_amount(0, 'XOF')} payés sur {format_amount(50_000, 'XOF')}."
    )
    await choose(page, "MTN Mobile Money Bénin")
    await page.get_by_label("Numéro MTN Mobile Money Bénin").fill("97000000")
    await page.get_by_label("Montant du versement (XOF)").fill("20 000")
    await page.get_by_role("button", name="Payer").click()
    await expect(page).to_have_url(ATTEMPT)
    await expect(page.get_by_role("status")).to_have_text("Paiement réussi. Merci !")
    await visit(page, checkout)
    await expect(page.get_by_role("status")).to_have_text("Cette commande est payée.")


async def test_the_keyboard_goes_through_the_form_in_reading_order(
    page: Page, http: httpx.AsyncClient, runtime: Runtime, return_page: ReturnPage
) -> None:
    _, checkout = await open_checkout(runtime, http, return_page, country="SN")
    await visit(page, checkout)
    await choose(page, "Orange Money Sénégal")
    await page.get_by_label("Numéro Orange Money Sénégal").focus()
    for expected in ("#otp", 'button[type="submit"]', "text=Changer de moyen de paiement"):
        await page.keyboard.press("Tab")
        await expect(page.locator(expected)).to_be_focused()
