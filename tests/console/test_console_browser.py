"""Issue 14: the console in a real headless Chromium: a one-time link, a password, the TOTP
enrollment, then signing out and in again with a code; a viewer refused an admin page. The
screenshots of the README are taken here (docs/screenshots/console-*.png)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pyotp
import pytest
from playwright.async_api import ConsoleMessage, Page, expect

from cauri.runtime import Runtime
from tests.console.builders import NEW_PASSWORD, make_staff, welcome_path
from tests.console.screenshots import screenshot
from tests.support import ServerThread

pytestmark = pytest.mark.browser


@pytest.fixture
def csp_violations(page: Page) -> Iterator[list[str]]:
    """What Chromium reports the CSP blocked on the pages of the test (nothing, it must be)."""
    blocked: list[str] = []

    def seen(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            blocked.append(message.text)

    page.on("console", seen)
    yield blocked


async def test_link_password_enrollment_then_sign_in_with_a_code(
    page: Page, server: ServerThread, runtime: Runtime, csp_violations: list[str]
) -> None:
    admin = await make_staff(runtime, role="admin", password=None, enrolled=False)
    await page.goto(server.base_url + await welcome_path(runtime, admin.email))
    await expect(page.get_by_role("heading", level=1)).to_have_text("Bienvenue")
    await page.get_by_label("Nouveau mot de passe").fill(NEW_PASSWORD)
    await page.get_by_label("Confirmez le mot de passe").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Enregistrer le mot de passe").click()

    await expect(page).to_have_url(f"{server.base_url}/console/two-factor")
    await expect(page.get_by_role("heading", level=1)).to_have_text(
        "Activer la double authentification"
    )
    qr = page.get_by_role("img", name="Code QR de la clé TOTP de awa@cauri.example")
    await expect(qr).to_be_visible()
    assert await qr.evaluate("image => image.naturalWidth") > 0  # the CSP lets data: in
    secret = (await page.locator("#totp-secret").inner_text()).replace(" ", "")
    assert (await page.locator("#totp-uri").inner_text()).startswith("otpauth://totp/Cauri:")
    await screenshot(page, "console-two-factor")
    await page.get_by_label("Code à six chiffres").fill(pyotp.TOTP(secret).now())
    await page.get_by_role("button", name="Activer et se connecter").click()

    await expect(page).to_have_url(f"{server.base_url}/console/")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Vue d'ensemble")
    await expect(page.locator("#overview-role")).to_have_text("administrateur")
    menu = page.get_by_role("navigation", name="Menu de la console")
    await expect(menu.get_by_role("link", name="Personnel")).to_be_visible()
    await expect(menu.get_by_role("link", name="Vue d'ensemble")).to_have_attribute(
        "aria-current", "page"
    )
    # Chromium keeps the Secure cookie on http://127.0.0.1: loopback counts as secure.
    [cookie] = [c for c in await page.context.cookies() if c["name"] == "cauri_console"]
    assert cookie["secure"] and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert cookie["path"] == "/console"
    await screenshot(page, "console-overview")

    await page.keyboard.press("Tab")
    await expect(page.get_by_role("link", name="Aller au contenu")).to_be_focused()

    await page.get_by_role("button", name="Se déconnecter").click()
    await expect(page).to_have_url(f"{server.base_url}/console/sign-in")
    await screenshot(page, "console-signin")
    await page.get_by_label("Adresse e-mail").fill("AWA@cauri.example")
    await page.get_by_label("Mot de passe").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Se connecter").click()
    await expect(page).to_have_url(f"{server.base_url}/console/sign-in/code")
    # The enrollment used this step's code: the next step's is new, and still accepted.
    next_step = datetime.now(UTC) + timedelta(seconds=30)
    await page.get_by_label("Code à six chiffres").fill(pyotp.TOTP(secret).at(next_step))
    await page.get_by_role("button", name="Valider").click()
    await expect(page).to_have_url(f"{server.base_url}/console/")
    await expect(page.locator("#signed-in")).to_have_text("awa@cauri.example · administrateur")
    assert csp_violations == []


async def test_viewer_is_refused_an_admin_page(
    page: Page, server: ServerThread, runtime: Runtime, csp_violations: list[str]
) -> None:
    viewer = await make_staff(runtime, "koffi@cauri.example", "viewer")
    await page.goto(f"{server.base_url}/console/")
    await expect(page).to_have_url(f"{server.base_url}/console/sign-in")
    await page.get_by_label("Adresse e-mail").fill(viewer.email)
    await page.get_by_label("Mot de passe").fill(viewer.password)
    await page.get_by_role("button", name="Se connecter").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Vue d'ensemble")
    menu = page.get_by_role("navigation", name="Menu de la console")
    await expect(menu.get_by_role("link", name="Personnel")).to_have_count(0)

    response = await page.goto(f"{server.base_url}/console/staff")
    assert response is not None and response.status == 403
    await expect(page.get_by_role("heading", level=1)).to_have_text("Action refusée")
    await expect(page.get_by_role("alert")).to_have_text(
        "Votre rôle (lecture seule) ne permet pas de gérer le personnel."
    )
    await screenshot(page, "console-forbidden")
    assert csp_violations == []
