"""Issue 28, payout batches in the staff console, in a real headless Chromium at a phone's
width (375 px): a viewer finds a merchant's batch, opens it, follows an item to its payout
and reads why another was refused."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, expect

from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.console.browsing import sign_in
from tests.console.builders import make_staff
from tests.console.test_money_approvals_browser import PHONE, fits
from tests.payout_batches.builders import item
from tests.payouts.builders import top_up
from tests.support import ServerThread, make_merchant

pytestmark = pytest.mark.browser


async def test_a_viewer_reads_a_batch_and_follows_its_items(
    page: Page, server: ServerThread, client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime, name="Boutique Awa")
    await top_up(runtime, merchant.id, 10_000)
    body = {"external_id": "salaires-11", "items": [item(1), item(2, amount=-5)]}
    sent = await client.post("/api/v1/payout-batches", json=body, headers=merchant.headers())
    assert sent.status_code == 201, sent.text
    reference = sent.json()["data"]["reference"]
    await worker.drain()
    await page.set_viewport_size(PHONE)
    await sign_in(page, server, await make_staff(runtime, "koffi@cauri.example", "viewer"))

    await (
        page.get_by_role("navigation", name="Menu de la console")
        .get_by_role("link", name="Lots de transferts")
        .click()
    )
    row = page.locator("#batches tbody tr")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text(merchant.id)
    await expect(row).to_contain_text("terminé")
    # Review at 375 px: the signed-in person's line (a viewer's) ran past the screen.
    assert await fits(page)
    await row.get_by_role("link", name=reference).click()
    await expect(page.get_by_role("heading", level=1)).to_have_text(
        f"Lot de transferts {reference}"
    )
    await expect(page.locator("#batch-counts")).to_contain_text("1 réussis")
    items = page.locator("#items tbody tr")
    await expect(items.nth(1)).to_contain_text("invalid_request")
    # Review at 375 px: a title with a reference in it ran past the screen.
    assert await fits(page)
    await items.nth(0).get_by_role("link").click()
    await expect(page.get_by_role("heading", level=1)).to_contain_text("Transfert pyo_")


async def test_finance_sends_a_batch_for_a_merchant_from_a_file(
    page: Page, server: ServerThread, runtime: Runtime, tmp_path: Path
) -> None:
    """As `cauri payouts batch` does, from the page: a file the reader refuses is said, the
    batch sent is shown with its items (test mode: made by the worker)."""
    merchant = await make_merchant(runtime, name="Boutique Awa")
    await top_up(runtime, merchant.id, 10_000)
    good = tmp_path / "salaires.csv"
    good.write_text(
        "external_id,amount,operator,phone_number\n"
        "s-1,1000,mtn,22997000000\ns-2,deux mille,mtn,22997000000\n"
    )
    empty = tmp_path / "vide.csv"
    empty.write_text("external_id,amount,operator,phone_number\n")
    await page.set_viewport_size(PHONE)
    await sign_in(page, server, await make_staff(runtime, "fatou@cauri.example", "finance"))
    await page.goto(f"{server.base_url}/console/payout-batches")

    form = page.locator("form.send-batch")
    await form.get_by_label("Marchand").fill(merchant.id)
    await form.get_by_label("Fichier CSV ou JSON").set_input_files(str(empty))
    await form.get_by_role("button", name="Envoyer le lot").click()
    await expect(page.locator("#action-refused")).to_be_visible()
    assert await fits(page)

    form = page.locator("form.send-batch")
    await form.get_by_label("Marchand").fill(merchant.id)
    await form.get_by_label("Fichier CSV ou JSON").set_input_files(str(good))
    await form.get_by_role("button", name="Envoyer le lot").click()
    await expect(page.get_by_role("heading", level=1)).to_contain_text("Lot de transferts")
    items = page.locator("tbody tr")
    await expect(items).to_have_count(2)
    await expect(items.filter(has_text="s-2")).to_contain_text("invalid_request")
    assert await fits(page)
