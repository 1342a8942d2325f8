"""Screenshots of the checkout page for the README: a browser test that reaches a page worth
showing saves it to docs/screenshots/checkout-<name>.png (overwritten at each run), at the
phone's width the test set (the page is made for phones first)."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page

DIRECTORY = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PHONE_WIDTH = 375


async def screenshot(page: Page, name: str) -> Path:
    """Saves the whole page as the phone shows it (the viewport left as the test set it);
    returns the file."""
    viewport = page.viewport_size
    assert viewport is not None and viewport["width"] == PHONE_WIDTH, viewport
    DIRECTORY.mkdir(parents=True, exist_ok=True)
    path = DIRECTORY / f"checkout-{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes().startswith(b"\x89PNG")
    return path
