"""The discrepancy queue's corrections over HTTP (issue 28): what a merchant owes after a
correction its balance could not cover is shown to finance above the queue, and a
correction above the platform's dual-approval amount is only asked."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from cauri.runtime import Runtime
from tests.console.builders import ConsoleClient
from tests.console.test_actions import post_form, signed_in
from tests.console.test_discrepancies_browser import two_discrepancies
from tests.payouts.test_maker_checker import dual_above
from tests.support import make_merchant, scalar

QUEUE = "/console/discrepancies"


async def ids(runtime: Runtime) -> dict[str, int]:
    async with runtime.engine.connect() as connection:
        rows = await connection.execute(text("SELECT kind, id FROM discrepancies"))
        return {kind: identifier for kind, identifier in rows}


async def test_what_a_merchant_cannot_cover_is_shown_as_owed_and_big_corrections_wait(
    console: ConsoleClient, runtime: Runtime, tmp_path: Path
) -> None:
    await two_discrepancies(runtime, tmp_path)
    merchant = await make_merchant(runtime, name="Boutique Awa")
    found = await ids(runtime)
    await signed_in(console, runtime, "finance", "fatou")

    # The deposit was the merchant's own cash-in gone wrong: it owes the 500 taken back.
    done = await post_form(
        console,
        QUEUE,
        f"{QUEUE}/{found['missing_at_cauri']}/resolve",
        {"reason": "Erreur du marchand", "book": f"merchant:{merchant.id}=-500\nsuspense=500"},
    )
    assert done.status_code == 303, done.text
    page = await console.get(QUEUE)
    owed = page.text[page.text.index('id="receivables"') : page.text.index("</table>")]
    assert "Créances sur les marchands" in owed
    assert merchant.id in owed and ">500\u202fXOF<" in owed.replace("\xa0", "\u202f")

    await dual_above(runtime, 1_000)
    asked = await post_form(
        console,
        QUEUE,
        f"{QUEUE}/{found['fee_taken']}/resolve",
        {"reason": "Frais pawaPay", "book": "operator_costs=-5000"},
    )
    assert asked.headers["location"].endswith(f"?demande={found['fee_taken']}")
    pending = "SELECT count(*) FROM money_approvals WHERE kind = 'discrepancy.resolve'"
    assert await scalar(runtime, pending) == 1
    still_open = "SELECT count(*) FROM discrepancies WHERE resolved_at IS NULL"
    assert await scalar(runtime, still_open) == 1


async def test_an_amount_no_ledger_could_hold_is_refused_in_french(
    console: ConsoleClient, runtime: Runtime, tmp_path: Path
) -> None:
    """Review finding: these were 500s (an infinite amount, one past the ledger's bigint)."""
    await two_discrepancies(runtime, tmp_path)
    found = await ids(runtime)
    await signed_in(console, runtime, "finance", "fatou")
    for book in ("suspense=Infinity", "suspense=1e30", "suspense=-9223372036854775808"):
        refused = await post_form(
            console,
            QUEUE,
            f"{QUEUE}/{found['missing_at_cauri']}/resolve",
            {"reason": "x", "book": book},
        )
        assert refused.status_code == 422, (book, refused.status_code)
        assert "CIBLE=MONTANT" in refused.text
    assert await scalar(runtime, "SELECT count(*) FROM ledger_transactions") == 0
