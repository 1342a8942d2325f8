"""The wallet's balance at its edges (review findings of session 19): an operation the
operator booked just before the first statement Cauri reads and Cauri settled just after
it, and a collection the operator reverses the next day; MTN's contract fake, statements in
Cauri's CSV."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.fakes.mtn_momo import MtnMomoFake
from tests.foundation.builders import run_cli
from tests.operators.end_to_end.mtn_statuses import paid
from tests.operators.mtn_live import CONNECTOR, NUMBER, mtn_fake, wire
from tests.payments.builders import merchant_available
from tests.support import MerchantKeys, make_merchant

HEADER = "operator_id,reference,kind,status,amount,fee,currency,phone_number,at\n"


@pytest.fixture
def clock() -> ManualClock:
    # Ten seconds before midnight (UTC): the request is sent; Cauri learns its outcome from
    # a status query after midnight.
    return ManualClock(datetime(2026, 11, 26, 23, 59, 50, tzinfo=UTC))


@pytest.fixture
def fake() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        fake.callback_mode = "drop"  # outcomes come from status queries
        yield fake


@pytest.fixture
async def merchant(runtime: Runtime, fake: MtnMomoFake) -> MerchantKeys:
    await wire(runtime, fake)
    return await make_merchant(runtime)


async def reconciled(database_url: str, path: Path, day: str) -> dict[str, Any]:
    await run_cli(database_url, "reconcile", "import", CONNECTOR, str(path))
    ran = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    found: dict[str, Any] = ran.json()["discrepancies"]
    return found


async def test_an_operation_booked_by_the_operator_before_the_first_statement_counts_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
    database_url: str,
    tmp_path: Path,
) -> None:
    """Booked by MTN before midnight, settled by Cauri after it: in the opening balance the
    first statement states, and in the wallet by its carried movement. The opening was the
    stated balance less what the books held at midnight: the 1,000 counted twice."""
    await paid(client, runtime, worker, merchant)
    path = tmp_path / "27.csv"
    path.write_text(
        HEADER + ",,opening_balance,,251000,,XOF,,\n"
        "FEE-1,,fee,succeeded,-35,,XOF,,2026-11-27T00:00:01Z\n"
        ",,closing_balance,,250965,,XOF,,\n"
    )
    found = await reconciled(database_url, path, "2026-11-27")
    assert found == {"fee_taken": 1, "balance_differs": 1}
    [balance] = (
        await run_cli(database_url, "reconcile", "list", "--kind", "balance_differs", "--json")
    ).rows()
    assert balance["details"]["difference"] == -35  # the fees only, not the 1,000 again


async def test_a_reversal_the_next_day_is_found_and_corrected_on_that_day(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
    database_url: str,
    tmp_path: Path,
) -> None:
    """MTN reverses on the 28th a collection of the 27th. The status difference was recorded
    on the 27th, whose balance its correction then changed, for good; and the correction
    suggested took the whole amount from the merchant, the platform's fee included."""
    runtime.clock.advance(seconds=3600)  # type: ignore[attr-defined]
    _, operation = await paid(client, runtime, worker, merchant)
    [sent] = fake.received("collect")
    at = runtime.clock.now()
    day, next_day = at.date(), at.date() + timedelta(days=1)
    first, second = tmp_path / "d.csv", tmp_path / "d1.csv"
    first.write_text(
        HEADER + ",,opening_balance,,250000,,XOF,,\n"
        f"{sent.financial_id},{operation},collect,succeeded,1000,,XOF,{NUMBER},{at.isoformat()}\n"
        ",,closing_balance,,251000,,XOF,,\n"
    )
    second.write_text(
        HEADER + ",,opening_balance,,251000,,XOF,,\n"
        f"{sent.financial_id}-R,{operation},collect,failed,-1000,,XOF,{NUMBER},"
        f"{next_day.isoformat()}T10:00:00Z\n"
        ",,closing_balance,,250000,,XOF,,\n"
    )
    assert await reconciled(database_url, first, day.isoformat()) == {}
    found = await reconciled(database_url, second, next_day.isoformat())
    assert found == {"status_differs": 1, "balance_differs": 1}
    [status] = (
        await run_cli(database_url, "reconcile", "list", "--kind", "status_differs", "--json")
    ).rows()
    assert status["day"] == next_day.isoformat()
    shown = await run_cli(database_url, "reconcile", "show", str(status["id"]), "--json")
    credited = await merchant_available(runtime, merchant.id, livemode=True)
    suggested = shown.json()["suggested"]
    assert suggested[0] == f"merchant:{merchant.id}=-{credited}"
    book = [part for each in suggested for part in ("--book", each)]
    resolved = await run_cli(
        database_url, "reconcile", "resolve", str(status["id"]), "--reason", "annulé", *book
    )
    assert resolved.exit_code == 0, resolved.stderr
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    for each in (day, next_day):
        await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", each.isoformat())
    assert (await run_cli(database_url, "reconcile", "list", "--json")).rows() == []
