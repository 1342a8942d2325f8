"""Screenshots of the console for the README: a browser test that reaches a page worth
showing saves it to docs/screenshots/<name>.png (overwritten at each run)."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page

DIRECTORY = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


async def screenshot(page: Page, name: str) -> Path:
    """Saves the whole page at a fixed, common laptop width; returns the file."""
    DIRECTORY.mkdir(parents=True, exist_ok=True)
    await page.set_viewport_size({"width": 1280, "height": 800})
    path = DIRECTORY / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes().startswith(b"\x89PNG")
    return path
