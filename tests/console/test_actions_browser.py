"""Issue 14, maker-checker in a real headless Chromium: two finance staff, each in their own
browser, approve a payout above the platform's dual-approval amount from the queue; the
first leaves it held ("1 approbation sur 2"), the same person again is refused on the page,
the second pays it; the audit log shows both. Screenshots for the README:
docs/screenshots/console-approvals.png and console-audit.png."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import Page, expect

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.console.browsing import second_page as second_page
from tests.console.browsing import sign_in
from tests.console.builders import make_staff
from tests.console.screenshots import screenshot
from tests.console.test_actions import THRESHOLD, catch_up
from tests.payouts.builders import live_operator, set_limits, top_up
from tests.payouts.test_maker_checker import dual_above, held, state
from tests.support import ServerThread, make_merchant

pytestmark = pytest.mark.browser


async def test_two_finance_staff_approve_a_payout_above_the_threshold(
    page: Page,
    second_page: Page,
    server: ServerThread,
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
) -> None:
    fake = live_operator(runtime)
    merchant = await make_merchant(runtime, name="Boutique Awa")
    await top_up(runtime, merchant.id, 100_000, livemode=True)
    await set_limits(runtime, merchant.id, approval_threshold=1_000)
    await dual_above(runtime, THRESHOLD)
    reference = await held(client, merchant, 25_000)
    awa = await make_staff(runtime, "awa@cauri.example", "finance")
    binta = await make_staff(runtime, "binta@cauri.example", "finance")

    await sign_in(page, server, awa)
    menu = page.get_by_role("navigation", name="Menu de la console")
    await menu.get_by_role("link", name="Approbations").click()
    row = page.locator(f"#payout-{reference}")
    await expect(row.locator(".approvals")).to_have_text("0 approbation sur 2")
    await expect(row).to_contain_text("25 000 XOF")
    await row.get_by_label("Note (facultative)").fill("bénéficiaire vérifié")
    await row.get_by_role("button", name="Approuver").click()
    await expect(page.get_by_role("status")).to_contain_text("1 approbation sur 2")
    await expect(row.locator(".approvals")).to_contain_text("1 approbation sur 2")
    assert await state(runtime, reference) == ("pending", "required", False)

    # The same person again: refused on the page, nothing written.
    await row.get_by_role("button", name="Approuver").click()
    await expect(page.get_by_role("alert")).to_contain_text("Vous avez déjà approuvé le transfert")
    await screenshot(page, "console-approvals")

    await sign_in(second_page, server, binta)
    await second_page.goto(f"{server.base_url}/console/approvals")
    other_row = second_page.locator(f"#payout-{reference}")
    await expect(other_row).to_contain_text("awa@cauri.example")
    await other_row.get_by_role("button", name="Approuver").click()
    await expect(second_page.get_by_role("status")).to_contain_text(
        "approuvé (2 approbations sur 2)"
    )
    await expect(second_page.locator(f"#payout-{reference}")).to_have_count(0)
    catch_up(clock)
    await worker.drain()
    assert await state(runtime, reference) == ("succeeded", "approved", True)
    assert [d.reference for d in fake.disbursed] == [reference]

    await page.goto(f"{server.base_url}/console/audit?resource_id={reference}")
    await expect(page.locator("#audit-total")).to_have_text("Entrées trouvées : 2")
    await expect(page.locator(".audit-entry .actor")).to_have_text(
        [
            "binta@cauri.example (console)",
            "awa@cauri.example (console)",
        ]
    )
    await screenshot(page, "console-audit")
