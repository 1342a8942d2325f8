"""Reconciliation of an MTN MoMo account, end to end (issue 28): MTN publishes no statement
format, so finance maps its partner portal's report to Cauri's own CSV and imports it with
`cauri reconcile import` (the format by default for the kind), then `cauri reconcile run`;
and what MTN's API says its accounts hold, with `cauri reconcile balances`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from cauri.ledger import movements
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.conftest import TEST_SECRET_KEY
from tests.fakes.mtn_momo import MtnMomoFake
from tests.foundation.builders import run_cli
from tests.operators.end_to_end.mtn_statuses import paid
from tests.operators.live import connect
from tests.operators.mtn_live import CONNECTOR, NUMBER, mtn_fake, wire
from tests.support import MerchantKeys, make_merchant

# The connector account's secrets are sealed with it: the CLI reads them to call MTN.
SECRET = {"CAURI_SECRET_KEY": TEST_SECRET_KEY}


@pytest.fixture
def fake() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        fake.callback_mode = "drop"  # outcomes come from status queries
        yield fake


@pytest.fixture
async def merchant(runtime: Runtime, fake: MtnMomoFake) -> MerchantKeys:
    await wire(runtime, fake)
    return await make_merchant(runtime)


async def test_an_mtn_report_mapped_to_cauris_csv_is_imported_and_matched(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
    database_url: str,
    tmp_path: Path,
) -> None:
    _, operation = await paid(client, runtime, worker, merchant)
    [collected] = fake.received("collect")
    at = runtime.clock.now().isoformat()
    day = runtime.clock.now().date().isoformat()
    path = tmp_path / "mtn-report.csv"
    path.write_text(
        "operator_id,reference,kind,status,amount,fee,currency,phone_number,at,Libellé\n"
        f",,opening_balance,,250000,,XOF,,,\n"
        f"{collected.financial_id},{operation},collect,succeeded,1000,,XOF,{NUMBER},{at},Paiement\n"
        f"MP-OWN-1,,collect,succeeded,700,,XOF,22997000001,{at},Hors Cauri\n"
        f"MP-FEE-1,,fee,succeeded,-35,,XOF,,{at},Frais\n"
        f",,closing_balance,,251665,,XOF,,,\n"
    )

    imported = await run_cli(database_url, "reconcile", "import", CONNECTOR, str(path), "--json")
    ran = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")

    assert (imported.json()["format"], imported.json()["lines"]) == ("cauri", 3)
    assert ran.json()["matched"] == 1
    # The 700 and the fees: the wallet's day ends 665 above the ledger's.
    assert ran.json()["discrepancies"] == {
        "missing_at_cauri": 1,
        "fee_taken": 1,
        "balance_differs": 1,
    }
    async with runtime.engine.connect() as connection:
        held = (
            await connection.execute(
                text("SELECT format, opening_balances, closing_balances FROM operator_statements")
            )
        ).one()
    assert tuple(held) == ("cauri", {"XOF": 250000}, {"XOF": 251665})

    balances = await run_cli(
        database_url, "reconcile", "balances", CONNECTOR, "--json", env_vars=SECRET
    )
    # Both accounts' 1,000,000 and the collection, labelled EUR as MTN's sandbox labels them:
    # nothing of the ledger's wallet (in XOF) is in EUR.
    assert balances.rows() == [
        {
            "connector": CONNECTOR,
            "currency": "EUR",
            "operator": 2_001_000,
            "cauri": 0,
            "difference": 2_001_000,
        }
    ]


async def test_a_balance_the_operator_cannot_give_is_said_in_plain_words(
    runtime: Runtime, fake: MtnMomoFake, merchant: MerchantKeys, database_url: str
) -> None:
    fake.fault("error_500", path="/collection/v1_0/account/balance")
    failed = await run_cli(database_url, "reconcile", "balances", CONNECTOR, env_vars=SECRET)
    assert failed.error()["code"] == "server_error"
    assert "n'a pas donné son solde" in failed.error()["message"]

    await connect(
        runtime,
        name="orange-ci",
        kind="orange_money",
        base_url="https://api.orange.com",
        settings={"country": "ci", "return_url": "https://shop.example/merci"},
        secrets={"client_id": "id", "client_secret": "secret", "merchant_key": "key"},
        operators=["orange_ci"],
        actions=("collect",),
        environment="production",
    )
    refused = await run_cli(database_url, "reconcile", "balances", "orange-ci", env_vars=SECRET)
    assert refused.error()["code"] == "invalid_request"
    assert "ne donne pas de solde par son API" in refused.error()["message"]
    shown = await run_cli(database_url, "reconcile", "balances", CONNECTOR, env_vars=SECRET)
    assert shown.stdout.split() == [
        "currency", "operator", "cauri", "difference", "EUR", "2000000", "0", "2000000",
    ]  # fmt: skip


async def test_an_opening_balance_equal_to_the_books_books_nothing(
    merchant: MerchantKeys, database_url: str, tmp_path: Path, runtime: Runtime
) -> None:
    """Found by the bench: a wallet that held nothing before its first statement, as Cauri's
    books said, made an empty ledger transaction, and the run failed."""
    at = runtime.clock.now().isoformat()
    day = runtime.clock.now().date().isoformat()
    path = tmp_path / "mtn-report.csv"
    path.write_text(
        "operator_id,kind,status,amount,currency,at\n"
        ",opening_balance,,0,XOF,\n"
        f"MP-OWN-1,collect,succeeded,700,XOF,{at}\n"
        ",closing_balance,,700,XOF,\n"
    )
    await run_cli(database_url, "reconcile", "import", CONNECTOR, str(path))
    ran = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    assert ran.json()["booked"] == 0
    assert ran.json()["discrepancies"] == {"missing_at_cauri": 1, "balance_differs": 1}


async def test_one_top_up_in_two_statements_is_booked_once(
    merchant: MerchantKeys, database_url: str, tmp_path: Path, runtime: Runtime
) -> None:
    """Review finding: stamped to the millisecond by one statement and to the second by the
    other, a top-up was two lines, both booked: the wallet twice what was put in."""
    day = runtime.clock.now().date().isoformat()
    header = "operator_id,kind,status,amount,currency,at\n"
    for name, at in (("api.csv", f"{day}T10:00:00.250Z"), ("export.csv", f"{day}T10:00:00Z")):
        path = tmp_path / name
        path.write_text(header + f"TOPUP-1,topup,succeeded,500000,XOF,{at}\n")
        await run_cli(database_url, "reconcile", "import", CONNECTOR, str(path))
    ran = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    assert ran.json()["booked"] == 1
    async with runtime.sessionmaker() as session:
        assert await movements.wallet_balance(session, CONNECTOR, True, "XOF") == 500_000
