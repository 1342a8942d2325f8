"""Issue 28, the discrepancy queue in a real headless Chromium at a phone's width (375 px):
finance opens "Écarts opérateurs", reads what an operator's statement said that Cauri's
books do not, resolves one with a reason (in the audit log) and the fees it books as the
platform's cost; a viewer has no such page."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, expect
from sqlalchemy import text

from cauri.audit.actor import Actor
from cauri.kit.db import unit_of_work
from cauri.reconciliation.days import UTC_DAYS
from cauri.reconciliation.imports import import_file
from cauri.reconciliation.runs import reconcile_day
from cauri.runtime import Runtime
from tests.console.browsing import sign_in
from tests.console.builders import make_staff
from tests.console.test_money_approvals_browser import PHONE, fits
from tests.operators.live import connect
from tests.support import ServerThread

pytestmark = pytest.mark.browser

CONNECTOR = "pawapay-live"
# The wallet's statement of a day: a deposit Cauri never asked for, and pawaPay's fees.
STATEMENT = """Creation Date,MSISDN,Transaction ID,Amount,Currency,Country,MNO,Type
{day} 09:15:00,22951000000,dep-own-1,7000,XOF,BEN,MTN_MOMO_BEN,Deposit
{day} 23:00:00,,fees-1,350,XOF,BEN,,Fees
"""


async def two_discrepancies(runtime: Runtime, tmp_path: Path) -> None:
    await connect(
        runtime,
        name=CONNECTOR,
        kind="pawapay",
        base_url="https://api.pawapay.io",
        settings={"signed_callbacks": "true"},
        secrets={"api_token": "a-token"},
        operators=["mtn"],
    )
    day = runtime.clock.now().date()
    path = tmp_path / "statement.csv"
    path.write_text(STATEMENT.format(day=day.isoformat()))
    async with unit_of_work(runtime.sessionmaker) as session:
        await import_file(session, CONNECTOR, path, Actor.cli(), runtime.clock.now(), UTC_DAYS)
    async with unit_of_work(runtime.sessionmaker) as session:
        now = runtime.clock.now()
        run = await reconcile_day(session, Actor.cli(), CONNECTOR, day, now, UTC_DAYS)
    assert run.found == {"missing_at_cauri": 1, "fee_taken": 1}


async def test_finance_reads_the_queue_and_resolves_a_discrepancy_with_a_reason(
    page: Page, server: ServerThread, runtime: Runtime, tmp_path: Path
) -> None:
    await two_discrepancies(runtime, tmp_path)
    fatou = await make_staff(runtime, "fatou@cauri.example", "finance")
    await page.set_viewport_size(PHONE)
    await sign_in(page, server, fatou)

    await (
        page.get_by_role("navigation", name="Menu de la console")
        .get_by_role("link", name="Écarts opérateurs")
        .click()
    )
    await expect(page.get_by_role("heading", level=1)).to_have_text("Écarts avec les opérateurs")
    rows = page.locator("#discrepancies tbody tr")
    await expect(rows).to_have_count(2)
    missing = rows.filter(has_text="Absente chez Cauri")
    await expect(missing).to_contain_text("dep-own-1")
    await expect(missing).to_contain_text(CONNECTOR)
    fees = rows.filter(has_text="Frais prélevés par l'opérateur")
    await expect(fees).to_contain_text("350")
    assert await fits(page)

    # A reason is required: the browser says so before anything is sent.
    await fees.get_by_role("button", name="Résoudre").click()
    await expect(rows).to_have_count(2)
    await fees.get_by_label("Motif").fill("Frais pawaPay du jour, passés en charge")
    # The fees booked as the platform's cost: a line finance mistypes is refused, and said.
    await fees.get_by_label("Correction au grand livre").fill("operator_costs=beaucoup")
    await fees.get_by_role("button", name="Résoudre").click()
    await expect(page.locator("#action-refused")).to_contain_text("CIBLE=MONTANT")
    assert await fits(page)
    await fees.get_by_label("Motif").fill("Frais pawaPay du jour, passés en charge")
    # The row offers what fees most often call for.
    book = fees.get_by_label("Correction au grand livre")
    await expect(book).to_have_attribute("placeholder", "operator_costs=-350")
    await book.fill("operator_costs=-350")
    await fees.get_by_role("button", name="Résoudre").click()
    await expect(page.locator("#action-done")).to_contain_text("résolu")
    await expect(rows).to_have_count(1)
    await page.get_by_role("link", name="Voir aussi les écarts résolus").click()
    await expect(rows).to_have_count(2)
    await expect(rows.filter(has_text="Frais prélevés")).to_contain_text(
        "Frais pawaPay du jour, passés en charge"
    )
    async with runtime.engine.connect() as connection:
        who = await connection.scalar(
            text("SELECT actor_name FROM audit_log WHERE action = 'discrepancy.resolved'")
        )
        costs = await connection.scalar(
            text(
                "SELECT sum(amount) FROM ledger_postings "
                "WHERE account = 'platform:operator_costs:live:XOF'"
            )
        )
    assert who == "fatou@cauri.example"
    assert costs == -350


async def test_a_viewer_has_no_discrepancy_queue(
    page: Page, server: ServerThread, runtime: Runtime
) -> None:
    await sign_in(page, server, await make_staff(runtime, "koffi@cauri.example", "viewer"))
    menu = page.get_by_role("navigation", name="Menu de la console")
    await expect(menu.get_by_role("link", name="Écarts opérateurs")).to_have_count(0)
    response = await page.goto(f"{server.base_url}/console/discrepancies")
    assert response is not None and response.status == 403
