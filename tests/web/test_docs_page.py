"""Issue 12: `/api/v1/docs` renders in a real browser that may reach nothing but Cauri (every
other request is aborted and counted): Swagger UI loads, reads the document and shows the
operations."""

from __future__ import annotations

import pytest
from playwright.async_api import Page, Route, expect

from tests.support import ServerThread

pytestmark = pytest.mark.browser


async def test_the_docs_render_with_no_internet(page: Page, server: ServerThread) -> None:
    outside: list[str] = []

    async def only_cauri(route: Route) -> None:
        if route.request.url.startswith(server.base_url):
            await route.continue_()
        else:
            outside.append(route.request.url)
            await route.abort()

    await page.route("**/*", only_cauri)
    await page.goto(f"{server.base_url}/api/v1/docs")
    await expect(page.locator(".opblock-summary-path").first).to_be_visible()
    paths = await page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/api/v1/payments" in path for path in paths), paths
    await expect(page.locator(".btn.authorize")).to_be_visible()  # the bearer key scheme
    assert outside == []
