"""The customer's page over HTTP (issue 25): what it offers, its form's contract, its errors
in French next to their fields (never JSON), its CSRF token and its headers."""

from __future__ import annotations

import re

import httpx
import pytest
import structlog

from cauri.checkout.service import checkout_sessions
from cauri.runtime import Runtime
from tests.checkout.builders import open_session, page_path, submit
from tests.payments.builders import set_fee
from tests.support import make_merchant, scalar


def buttons(html: str) -> list[str]:
    """The operator codes the page offers, in order."""
    return re.findall(r'name="operator" value="([^"]+)"', html)


async def test_the_page_shows_the_merchant_the_amount_and_the_country_s_modes(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime, name="Boutique Awa")
    checkout = await open_session(client, merchant, country="SN", amount=12500)
    page = await client.get(page_path(checkout))
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "Paiement à Boutique Awa" in page.text
    assert "12\u202f500\u00a0XOF" in page.text
    assert "Commande 1042" in page.text
    assert "aucun argent ne circule" in page.text
    assert buttons(page.text) == ["orange_sn", "free_sn", "wave_sn", "VISA", "MASTERCARD"]
    assert '<option value="SN" selected>' in page.text
    benin = await client.get(page_path(checkout), params={"country": "BJ"})
    assert buttons(benin.text)[:4] == ["mtn", "moov", "celtiis_bj", "coris"]


async def test_the_merchant_s_allow_list_narrows_the_modes(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, operators=["moov", "VISA"])
    page = await client.get(page_path(checkout))
    assert buttons(page.text) == ["moov", "VISA"]
    other = await client.get(page_path(checkout), params={"operator": "mtn"})
    assert "Choisissez comment payer" in other.text  # not offered: back to the choice
    forced = await client.post(page_path(checkout), data={"operator": "mtn"})
    assert forced.status_code == 403  # no form of it was ever given
    allowed = await submit(client, checkout, "moov", phone_number="22997000000")
    assert allowed.status_code == 303


async def test_a_xaf_session_offers_only_what_collects_xaf(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, currency="XAF")
    page = await client.get(page_path(checkout))
    assert buttons(page.text) == ["mtn_cg", "VISA", "MASTERCARD"]


async def test_a_mode_s_form_asks_only_what_it_needs(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, customer={"firstname": "Awa"})
    push = (await client.get(page_path(checkout), params={"operator": "mtn"})).text
    assert 'name="phone_number"' in push and 'name="otp"' not in push
    assert "Numéros de test" in push
    otp = (await client.get(page_path(checkout), params={"operator": "orange_sn"})).text
    assert 'name="otp"' in otp and 'autocomplete="one-time-code"' in otp
    assert "ne communiquez jamais votre code secret" in otp
    card = (await client.get(page_path(checkout), params={"operator": "visa"})).text
    assert 'name="phone_number"' not in card
    assert 'name="firstname"' not in card  # the session has it
    assert 'name="lastname"' in card and 'name="email"' in card


async def test_bad_input_is_shown_next_to_its_field_and_writes_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    answer = await submit(client, checkout, "mtn", phone_number="22597000000")
    assert answer.status_code == 422
    assert answer.headers["content-type"].startswith("text/html")
    assert 'id="phone_number-error"' in answer.text
    assert "indicatif 229" in answer.text
    assert 'aria-invalid="true"' in answer.text
    assert 'value="22597000000"' in answer.text  # what was typed stays
    no_otp = await submit(client, checkout, "orange_sn", phone_number="221770000000")
    assert no_otp.status_code == 422 and 'id="otp-error"' in no_otp.text
    card = await submit(client, checkout, "VISA", firstname="Awa", lastname="D", email="non")
    assert card.status_code == 422 and 'id="email-error"' in card.text
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0


async def test_a_form_without_its_token_is_refused(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    forged = await client.post(
        page_path(checkout), data={"operator": "mtn", "phone_number": "22997000000"}
    )
    assert forged.status_code == 403 and "Le formulaire a expiré" in forged.text
    wrong = await client.post(
        page_path(checkout),
        data={"operator": "mtn", "phone_number": "22997000000", "csrf": "0" * 64},
        headers={"Cookie": "cauri_checkout=planted"},
    )
    assert wrong.status_code == 403
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0


@pytest.mark.parametrize("path", ["/checkout/cs_unknown", "/checkout/cs_unknown/attempts/x"])
async def test_an_unknown_page_is_an_html_404(client: httpx.AsyncClient, path: str) -> None:
    page = await client.get(path)
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")


async def test_an_attempt_is_shown_only_on_its_own_session_s_page(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    first = await open_session(client, merchant)
    second = await open_session(client, merchant)
    sent = await submit(client, first, "mtn", phone_number="22997000000")
    attempt = sent.headers["location"].rsplit("/", 1)[1]
    elsewhere = await client.get(f"{page_path(second)}/attempts/{attempt}")
    assert elsewhere.status_code == 404


async def test_the_page_is_never_framed_nor_cached_and_runs_only_its_own_script(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    page = await client.get(page_path(checkout), params={"operator": "mtn"})
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
    assert "default-src 'none'" in policy and "unsafe-inline" not in policy.split("script-src")[1]
    assert page.headers["cache-control"] == "no-store"
    scripts = re.findall(r"<script[^>]*>", page.text)
    assert scripts == ['<script src="/checkout/static/checkout.js" defer>']
    script = await client.get("/checkout/static/checkout.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith(
        "text/javascript"
    )
    assert len(page.content) + len(script.content) < 60_000
    cookie = page.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/;" in cookie


async def test_a_crash_is_a_french_page_that_shows_nothing_of_it(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)

    async def broken(*_: object) -> None:
        raise RuntimeError("détail interne 12345")

    monkeypatch.setattr(checkout_sessions, "offered", broken)
    with structlog.testing.capture_logs() as logged:
        answer = await client.get(page_path(checkout))
    assert [entry["event"] for entry in logged].count("http.unhandled_error") == 1
    assert answer.status_code == 500
    assert answer.headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert "rien n&#39;a été enregistré" in answer.text
    assert "12345" not in answer.text and "RuntimeError" not in answer.text


async def test_the_customer_sees_the_commission_they_pay_before_paying(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent="2", fixed=0)
    await set_fee(runtime, merchant.id, "moov", disabled=True)
    checkout = await open_session(client, merchant, amount=10000)
    choice = await client.get(page_path(checkout))
    assert "moov" not in buttons(choice.text)  # closed to this account: never offered
    form = await client.get(page_path(checkout), params={"operator": "mtn"})
    assert 'id="fee">200\u00a0XOF' in form.text
    assert 'id="total">10\u202f200\u00a0XOF' in form.text
    assert "Payer 10\u202f200\u00a0XOF" in form.text
    sent = await submit(client, checkout, "mtn", phone_number="22997000000")
    attempt = sent.headers["location"].rsplit("/", 1)[1]
    paid = await client.get(f"/api/v1/payments/{attempt}", headers=merchant.headers())
    assert (paid.json()["data"]["fee_amount"], paid.json()["data"]["total_amount"]) == (200, 10200)


async def test_the_page_speaks_english_to_a_browser_that_prefers_it(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime, name="Boutique Awa")
    checkout = await open_session(client, merchant)
    english = {"Accept-Language": "en-GB,en;q=0.9,fr;q=0.5"}
    page = await client.get(page_path(checkout), headers=english)
    assert '<html lang="en">' in page.text and page.headers["content-language"] == "en"
    assert "Payment to Boutique Awa" in page.text and "Choose how to pay" in page.text
    assert "Test mode" in page.text and "Choisissez" not in page.text
    assert "Accept-Language" in page.headers["vary"]
    form = await client.get(page_path(checkout), params={"operator": "orange_sn"}, headers=english)
    assert "Payment code" in form.text and "never share your PIN" in form.text
    assert "Pay 5\u202f000\u00a0XOF" in form.text
    french_first = await client.get(
        page_path(checkout), headers={"Accept-Language": "fr-FR,fr;q=0.9,en;q=0.8"}
    )
    assert (
        '<html lang="fr">' in french_first.text and "Choisissez comment payer" in french_first.text
    )
    nothing_said = await client.get(page_path(checkout))
    assert '<html lang="fr">' in nothing_said.text
    card = await submit(client, checkout, "VISA", firstname="A", lastname="D", email="a@d.example")
    card_page = await client.get(httpx.URL(card.headers["location"]).path, headers=english)
    assert "Refuse the payment" in card_page.text and "no card is debited." in card_page.text


async def test_the_number_typed_on_the_choice_predicts_the_operator(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, country="CI")
    moov = await client.get(page_path(checkout), params={"phone_number": "+229 01 95 00 00 00"})
    assert '<option value="BJ" selected>' in moov.text  # the number's country
    assert buttons(moov.text)[0] == "moov" and 'class="mode predicted"' in moov.text
    assert "Probablement : Moov Money Bénin" in moov.text and "portabilité" in moov.text
    assert 'value="+229 01 95 00 00 00"' in moov.text
    asked = await client.get(
        f"{page_path(checkout)}/predict", params={"phone_number": "2290195000000"}
    )
    assert asked.json() == {"country": "BJ", "operator": "moov", "name": "Moov Money Bénin"}
    unknown = await client.get(page_path(checkout), params={"phone_number": "+33612345678"})
    assert "Indicatif inconnu" in unknown.text
    form = await client.get(
        page_path(checkout), params={"operator": "moov", "phone_number": "0195000000"}
    )
    assert 'value="0195000000"' in form.text  # carried into the mode's form
