"""Fixtures of the hosted page's tests: the app on a real HTTP port, the merchant's return
page, and Debian's Chromium driven by Playwright (never a browser Playwright downloads)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import httpx
import pytest
from playwright.async_api import Browser, Page, async_playwright

from cauri.config import Settings
from cauri.kit.clock import ManualClock
from tests.support import RunningClock, ServerThread
from tests.web.receiver import ReturnPage

CHROMIUM = "/usr/bin/chromium"
HAVE_CHROMIUM = os.path.exists(CHROMIUM)
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    if not HAVE_CHROMIUM:
        pytest.skip(f"{CHROMIUM} is absent: install Debian's chromium package")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        await browser.close()


@asynccontextmanager
async def french_page(browser: Browser) -> AsyncIterator[Page]:
    """A page in a context of its own (its own cookies), in French."""
    context = await browser.new_context(locale="fr-FR")
    page = await context.new_page()
    page.set_default_timeout(15_000)
    yield page
    await context.close()


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    async with french_page(browser) as opened:
        yield opened


@pytest.fixture
def server(settings: Settings, database_url: str, clock: ManualClock) -> Iterator[ServerThread]:
    with ServerThread(settings, database_url, clock=RunningClock(clock)) as server:
        yield server


@pytest.fixture
async def http(server: ServerThread) -> AsyncIterator[httpx.AsyncClient]:
    """A real HTTP client of the served app (no redirects followed: tests look at them)."""
    async with httpx.AsyncClient(base_url=server.base_url, timeout=15) as client:
        yield client


@pytest.fixture
def return_page() -> Iterator[ReturnPage]:
    with ReturnPage() as receiver:
        yield receiver
