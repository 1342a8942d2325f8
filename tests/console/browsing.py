"""What the browser tests of the console and the dashboard share: signing a person in
through the door's pages (the code step only when the account has TOTP), and a second
person's browser."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, Page, expect

from tests.console.builders import Member
from tests.support import ServerThread
from tests.web.conftest import french_page


@pytest.fixture
async def second_page(browser: Browser) -> AsyncIterator[Page]:
    """Another person's browser: its own cookies."""
    async with french_page(browser) as opened:
        yield opened


async def submit_password(
    page: Page, server: ServerThread, member: Member, password: str, prefix: str = "/console"
) -> None:
    await page.goto(f"{server.base_url}{prefix}/sign-in")
    await page.get_by_label("Adresse e-mail").fill(member.email)
    await page.get_by_label("Mot de passe").fill(password)
    await page.get_by_role("button", name="Se connecter").click()


async def sign_in(
    page: Page,
    server: ServerThread,
    member: Member,
    prefix: str = "/console",
    heading: str = "Vue d'ensemble",
) -> None:
    """Through the door's pages (the console's unless `prefix` says), to its home."""
    await submit_password(page, server, member, member.password, prefix)
    if member.secret is not None:
        await page.get_by_label("Code à six chiffres").fill(
            member.code(server.clock.now(), steps_ahead=1)
        )
        await page.get_by_role("button", name="Valider").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text(heading)
