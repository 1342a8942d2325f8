"""Reconciliation against pawaPay's wallet statement, end to end (issue 28): live money
through pawaPay's contract fake, its statement exported as the dashboard does (CSV, the
documented columns), imported with `cauri reconcile import`, matched by `cauri reconcile
run`; and the third way: an operation that succeeded without its ledger postings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.conftest import TEST_SECRET_KEY
from tests.fakes.pawapay import PawapayFake
from tests.foundation.builders import run_cli
from tests.operators.end_to_end.test_pawapay import CARRIED, COMPLETED, CONNECTOR, pawapay_fake
from tests.operators.live import connect, refund_payment, run, send_payout, status_of
from tests.payments.builders import pay
from tests.payouts.builders import top_up
from tests.support import MerchantKeys, ServerThread, make_merchant, momo_body

TOKEN = "pawapay-sandbox-api-token"
# The connector account's secrets are sealed with it: the CLI reads them to call pawaPay.
SECRET = {"CAURI_SECRET_KEY": TEST_SECRET_KEY}


@pytest.fixture
def fake(callbacks: ServerThread) -> Iterator[PawapayFake]:
    with pawapay_fake(callbacks) as fake:
        fake.callback_mode = "drop"  # outcomes come from status queries
        yield fake


@pytest.fixture
async def merchant(runtime: Runtime, fake: PawapayFake) -> MerchantKeys:
    await connect(
        runtime,
        name=CONNECTOR,
        kind="pawapay",
        base_url=fake.base_url,
        settings={"signed_callbacks": "true"},
        secrets={"api_token": TOKEN},
        operators=CARRIED,
    )
    return await make_merchant(runtime)


async def paid(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, m: MerchantKeys
) -> tuple[str, str]:
    """A live payment pawaPay completed and Cauri settled: its reference and its deposit's
    id (the operation's)."""
    response = await pay(client, m.headers(livemode=True), momo_body(phone_number=COMPLETED))
    assert response.status_code == 201, response.text
    reference = response.json()["data"]["reference"]
    await run(runtime, worker, 30)
    assert await status_of(client, m, f"payments/{reference}") == "succeeded"
    async with runtime.engine.connect() as connection:
        operation = await connection.scalar(
            text("SELECT id FROM operator_operations WHERE subject_ref = :r"), {"r": reference}
        )
    return reference, str(operation)


async def reconciled(
    database_url: str, statement: str, day: str, tmp_path: Path, name: str = "statement.csv"
) -> dict[str, Any]:
    path = tmp_path / name
    path.write_text(statement)
    imported = await run_cli(database_url, "reconcile", "import", CONNECTOR, str(path), "--json")
    assert imported.json()["format"] == "pawapay"
    ran = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    return ran.json()


async def listed(database_url: str) -> dict[str, dict[str, Any]]:
    rows = (await run_cli(database_url, "reconcile", "list", "--json")).rows()
    return {row["kind"]: row for row in rows}


async def test_each_kind_of_difference_with_a_pawapay_statement_is_found(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
    database_url: str,
    tmp_path: Path,
) -> None:
    day = runtime.clock.now().date().isoformat()
    _, twice = await paid(client, runtime, worker, merchant)
    _, omitted = await paid(client, runtime, worker, merchant)
    refunded, relabelled = await paid(client, runtime, worker, merchant)
    await refund_payment(client, merchant, refunded)
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{refunded}") == "refunded"
    await top_up(runtime, merchant.id, 5000, livemode=True)
    payout = await send_payout(
        client, merchant, {"amount": 1000, "phone_number": COMPLETED, "operator": "mtn"}
    )
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payouts/{payout['reference']}") == "succeeded"
    [sent] = fake.payouts
    at = f"{day} 12:00:00"
    statement = fake.statement_csv(
        twice=[twice],
        omit=[omitted],
        amounts={sent: "1500"},
        currencies={relabelled: "XAF"},
        extra=[
            # A deposit of the wallet's own, and pawaPay's fees for the day.
            {"Creation Date": at, "MSISDN": "22951000000", "Transaction ID": "dep-own-1",
             "Amount": "700", "Currency": "XOF", "Country": "BEN", "MNO": "MTN_MOMO_BEN",
             "Type": "Deposit"},
            {"Creation Date": at, "MSISDN": "", "Transaction ID": "fees-1", "Amount": "35",
             "Currency": "XOF", "Country": "BEN", "MNO": "", "Type": "Fees"},
        ],
    )  # fmt: skip

    run_ = await reconciled(database_url, statement, day, tmp_path)

    assert run_["discrepancies"] == {
        "duplicate_at_operator": 1,
        "missing_at_operator": 1,
        "amount_differs": 1,
        "currency_differs": 1,
        "missing_at_cauri": 1,
        "fee_taken": 1,
    }
    found = await listed(database_url)
    assert found["currency_differs"]["operation"] == relabelled
    assert found["currency_differs"]["details"] == {"operator": "XAF", "cauri": "XOF"}
    assert found["duplicate_at_operator"]["operation"] == twice
    assert found["missing_at_operator"]["operation"] == omitted
    assert found["amount_differs"]["operation"] == sent
    assert found["amount_differs"]["details"] == {"operator": 1500, "cauri": 1000}
    assert found["missing_at_cauri"]["details"]["operator_id"] == "dep-own-1"
    assert found["fee_taken"]["details"] == {"amount": 35, "lines": 1}
    shown = await run_cli(
        database_url, "reconcile", "show", str(found["amount_differs"]["id"]), "--json"
    )
    both = shown.json()
    assert both["line"]["amount"] == -1500 and both["line"]["kind"] == "disburse"
    assert both["cauri"]["amount"] == 1000 and both["cauri"]["subject"] == "payout"


async def test_a_payment_pawapay_completed_without_its_ledger_postings_is_found(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
    database_url: str,
    tmp_path: Path,
) -> None:
    """The third way: the statement and the operation agree, the ledger does not (its
    transaction lost, as a restore from an incomplete backup would lose it)."""
    day = runtime.clock.now().date().isoformat()
    reference, operation = await paid(client, runtime, worker, merchant)
    async with runtime.engine.begin() as connection:
        # The append-only guard and the foreign keys are triggers, skipped in this role.
        await connection.execute(text("SET LOCAL session_replication_role = replica"))
        ids = "SELECT id FROM ledger_transactions WHERE reference = :r"
        await connection.execute(
            text(f"DELETE FROM ledger_postings WHERE transaction_id IN ({ids})"),  # noqa: S608
            {"r": reference},
        )
        await connection.execute(
            text("DELETE FROM ledger_transactions WHERE reference = :r"), {"r": reference}
        )

    run_ = await reconciled(database_url, fake.statement_csv(), day, tmp_path)

    assert run_["discrepancies"] == {"ledger_differs": 1}
    [found] = (await run_cli(database_url, "reconcile", "list", "--json")).rows()
    assert found["operation"] == operation
    assert found["details"] == {"subject": reference, "expected": -1000, "posted": 0}


async def test_a_statement_without_the_documented_columns_is_refused(
    merchant: MerchantKeys, database_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "other.csv"
    path.write_text("Date,Reference,Montant\n2026-11-28,abc,100\n")
    refused = await run_cli(database_url, "reconcile", "import", CONNECTOR, str(path))
    error = refused.error()
    assert error["code"] == "invalid_request"
    assert "Transaction ID" in error["message"]


async def test_pawapays_statements_are_fetched_through_its_api_wallet_by_wallet(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
    database_url: str,
) -> None:
    """`cauri reconcile fetch`: each wallet's statement asked for, read until pawaPay has
    built it, downloaded, and imported as the dashboard's export is."""
    day = runtime.clock.now().date().isoformat()
    _, omitted = await paid(client, runtime, worker, merchant)
    _, kept = await paid(client, runtime, worker, merchant)
    fake.statement_wrongs = {"omit": [omitted]}
    fetched = await run_cli(
        database_url, "reconcile", "fetch", CONNECTOR, "--date", day, "--json", env_vars=SECRET
    )
    assert (fetched.json()["format"], fetched.json()["lines"]) == ("pawapay", 1)
    asked = [r for r in fake.requests if r.path == "/v2/statements"]
    assert {r.body["wallet"]["country"] for r in asked} == {w["country"] for w in fake.wallets()}
    assert asked[0].body["startDate"] == f"{day}T00:00:00"
    ran = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    assert ran.json()["discrepancies"] == {"missing_at_operator": 1}
    assert (await listed(database_url))["missing_at_operator"]["operation"] == omitted
    assert kept != omitted


async def test_a_statement_pawapay_fails_to_build_is_said_and_nothing_is_imported(
    fake: PawapayFake, merchant: MerchantKeys, database_url: str, runtime: Runtime
) -> None:
    fake.statement_failure = "INTERNAL_ERROR"
    refused = await run_cli(
        database_url, "reconcile", "fetch", CONNECTOR, "--date", "2026-11-27", env_vars=SECRET
    )
    assert refused.error()["code"] == "server_error"
    assert "failed" in refused.error()["message"]
    async with runtime.engine.connect() as connection:
        assert await connection.scalar(text("SELECT count(*) FROM operator_statements")) == 0


async def test_without_a_statement_of_the_day_nothing_is_missing_from_it(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    merchant: MerchantKeys,
    database_url: str,
) -> None:
    """Review finding: a run before the day's statement was in (a file not imported yet, a
    fetch that failed) found every operation of the day missing at the operator."""
    day = runtime.clock.now().date().isoformat()
    await paid(client, runtime, worker, merchant)
    ran = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    assert ran.json()["discrepancies"] == {}


async def test_fees_found_again_with_a_late_line_reopen_what_a_person_resolved(
    fake: PawapayFake, merchant: MerchantKeys, database_url: str, runtime: Runtime, tmp_path: Path
) -> None:
    """Review finding: a discrepancy found again kept what it said when first found."""
    day = runtime.clock.now().date().isoformat()
    fees = {"MSISDN": "", "Amount": "35", "Currency": "XOF", "Country": "BEN", "MNO": "",
            "Type": "Fees", "Creation Date": f"{day} 12:00:00"}  # fmt: skip
    first = fake.statement_csv(extra=[fees | {"Transaction ID": "fees-1"}])
    await reconciled(database_url, first, day, tmp_path, "first.csv")
    [fee] = (await run_cli(database_url, "reconcile", "list", "--json")).rows()
    resolved = await run_cli(
        database_url, "reconcile", "resolve", str(fee["id"]), "--reason", "ok",
        "--book", "operator_costs=-35",
    )  # fmt: skip
    assert resolved.exit_code == 0
    late = fake.statement_csv(extra=[fees | {"Transaction ID": "fees-2", "Amount": "15"}])
    await reconciled(database_url, late, day, tmp_path, "late.csv")
    [again] = (await run_cli(database_url, "reconcile", "list", "--json")).rows()
    assert again["id"] == fee["id"] and again["resolved_at"] is None
    assert again["details"] == {"amount": 50, "lines": 2}
    # The 35 booked already: what is left to book is the late line's 15, not the 50 again.
    shown = await run_cli(database_url, "reconcile", "show", str(fee["id"]), "--json")
    assert shown.json()["suggested"] == ["operator_costs=-15"]


async def test_a_statement_in_another_encoding_is_refused_without_a_trace(
    merchant: MerchantKeys, database_url: str, tmp_path: Path
) -> None:
    """Review finding: a file not in UTF-8 escaped as a traceback."""
    path = tmp_path / "cp1252.csv"
    header = "Creation Date,MSISDN,Transaction ID,Amount,Currency,Country,MNO,Type\n"
    line = "2026-11-28 10:00:00,229,dép-1,100,XOF,BEN,,Dépôt\n"
    path.write_bytes((header + line).encode("cp1252"))
    refused = await run_cli(database_url, "reconcile", "import", CONNECTOR, str(path))
    assert refused.error()["code"] == "invalid_request"


async def test_the_platforms_days_are_in_its_time_zone(
    merchant: MerchantKeys, database_url: str, tmp_path: Path
) -> None:
    """CAURI_TIME_ZONE=Africa/Brazzaville (UTC+1, a platform in Congo): a deposit pawaPay
    stamps 23:30 UTC on the 2nd is on the 3rd of the platform's days, found there and not
    on the 2nd."""
    congo = {"CAURI_TIME_ZONE": "Africa/Brazzaville"}
    path = tmp_path / "statement.csv"
    path.write_text(
        "Creation Date,MSISDN,Transaction ID,Amount,Currency,Country,MNO,Type\n"
        "2026-11-02 23:30:00,22951000000,dep-late-1,7000,XOF,BEN,MTN_MOMO_BEN,Deposit\n"
    )
    imported = await run_cli(
        database_url, "reconcile", "import", CONNECTOR, str(path), "--json", env_vars=congo
    )
    assert (imported.json()["first_day"], imported.json()["last_day"]) == (
        "2026-11-03",
        "2026-11-03",
    )
    found = {}
    for day in ("2026-11-02", "2026-11-03"):
        ran = await run_cli(
            database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json", env_vars=congo
        )
        found[day] = ran.json()["discrepancies"]
    assert found == {"2026-11-02": {}, "2026-11-03": {"missing_at_cauri": 1}}
    refused = await run_cli(
        database_url, "reconcile", "list", env_vars={"CAURI_TIME_ZONE": "Mars/Olympus"}
    )
    assert refused.exit_code != 0
    assert "CAURI_TIME_ZONE" in refused.stderr
