"""Reconciliation against Wave's list of transactions, end to end (issue 28): live money
through Wave's contract fake, its wallet's transactions fetched as its Balance &
Reconciliation API pages them, imported with `cauri reconcile import`, matched by `cauri
reconcile run`; each kind of discrepancy found, once, and closed when it is gone."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from cauri import jobs
from cauri.audit.actor import Actor
from cauri.kit.db import unit_of_work
from cauri.kit.errors import Conflict
from cauri.ledger import movements
from cauri.reconciliation.days import UTC_DAYS
from cauri.reconciliation.imports import import_file
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.conftest import TEST_SECRET_KEY
from tests.console.builders import make_staff
from tests.fakes.wave import WaveFake
from tests.foundation.builders import run_cli
from tests.operators.live import connect, refund_payment, run, send_payout, status_of
from tests.payments.builders import merchant_available, pay
from tests.payouts.builders import top_up
from tests.payouts.test_maker_checker import dual_above
from tests.support import MerchantKeys, ServerThread, make_merchant, momo_body

CONNECTOR = "wave-sn"
API_KEY = "wave_sn_prod_" + "CauriReconciliationKeyOfTheWallet01"
WEBHOOK_SECRET = "wave_sn_WHS_" + "caurireconciliationsecretofthefakewebhook0123456789ab"
NUMBER = "221771234567"
# The connector account's secrets are sealed with it: the CLI reads them to call Wave.
SECRET = {"CAURI_SECRET_KEY": TEST_SECRET_KEY}


@pytest.fixture
def fake(callbacks: ServerThread) -> Iterator[WaveFake]:
    with WaveFake(API_KEY, webhook_secret=WEBHOOK_SECRET) as fake:
        fake.webhook_mode = "drop"  # outcomes come from status queries: no waiting on threads
        fake.transactions_page_size = 2  # the fetch follows the pages
        yield fake


@pytest.fixture
async def merchant(runtime: Runtime, fake: WaveFake) -> MerchantKeys:
    await connect(
        runtime,
        name=CONNECTOR,
        kind="wave",
        environment="production",
        base_url=fake.base_url,
        settings={"return_url": "https://shop.example/merci"},
        secrets={"api_key": fake.api_key, "webhook_secret": WEBHOOK_SECRET},
        operators=["wave_sn"],
    )
    return await make_merchant(runtime)


async def paid(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, fake: WaveFake, m: MerchantKeys
) -> tuple[str, str]:
    """A live Wave payment the customer approved and Cauri settled: its reference and the
    operation's (the session's `client_reference`)."""
    response = await pay(
        client, m.headers(livemode=True), momo_body(operator="wave_sn", phone_number=NUMBER)
    )
    assert response.status_code == 201, response.text
    reference = response.json()["data"]["reference"]
    [session] = [s for s in fake.sessions.values() if s.payment_status == "processing"]
    fake.pay(session.id)
    await run(runtime, worker, 30)
    assert await status_of(client, m, f"payments/{reference}") == "succeeded"
    assert session.client_reference is not None
    return reference, session.client_reference


async def fetched(fake: WaveFake, day: str, into: Path) -> Path:
    """The day's pages of `GET /v1/transactions`, one JSON page a line, as Wave serves them."""
    pages, after = [], ""
    async with httpx.AsyncClient(base_url=fake.base_url) as http:
        while True:
            answer = await http.get(
                "/v1/transactions",
                params={"date": day, "after": after},
                headers={"Authorization": f"Bearer {fake.api_key}"},
            )
            assert answer.status_code == 200, answer.text
            page = answer.json()
            pages.append(json.dumps(page))
            if not page["page_info"]["has_next_page"]:
                break
            after = page["page_info"]["end_cursor"]
    into.write_text("\n".join(pages) + "\n")  # noqa: ASYNC240 (a small file, in a test)
    return into


async def reconcile(database_url: str, day: str) -> dict[str, Any]:
    """`cauri reconcile fetch` (Wave's API, through the connector account) then `run`."""
    fetched = await run_cli(
        database_url, "reconcile", "fetch", CONNECTOR, "--date", day, "--json", env_vars=SECRET
    )
    assert fetched.json()["format"] == "wave"
    ran = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    return ran.json()


async def discrepancies(database_url: str, *args: str) -> list[dict[str, Any]]:
    return (await run_cli(database_url, "reconcile", "list", *args, "--json")).rows()


def kinds(found: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return sorted((d["kind"], d["operation"]) for d in found)


async def test_each_kind_of_difference_with_wave_is_found_once_and_closed_when_gone(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    database_url: str,
    tmp_path: Path,
) -> None:
    day = runtime.clock.now().date().isoformat()
    _, twice = await paid(client, runtime, worker, fake, merchant)
    _, omitted = await paid(client, runtime, worker, fake, merchant)
    refunded, _ = await paid(client, runtime, worker, fake, merchant)
    await refund_payment(client, merchant, refunded)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{refunded}") == "refunded"
    await top_up(runtime, merchant.id, 5000, livemode=True)
    payout = await send_payout(
        client, merchant, {"amount": 1000, "phone_number": NUMBER, "operator": "wave_sn"}
    )
    assert payout["status"] == "succeeded"
    [sent] = fake.payouts.values()
    assert sent.client_reference is not None
    # What the wallet's list says that Cauri's books do not.
    fake.statement_duplicate(twice)
    fake.statement_omit(omitted)
    fake.statement_amount(sent.client_reference, "-1510")  # 1,500 sent instead of 1,000
    fake.statement_own("700", mobile="+221770000000")
    fake.sweep("100")

    run_ = await reconcile(database_url, day)

    assert run_["discrepancies"] == {
        "duplicate_at_operator": 1,
        "missing_at_operator": 1,
        "amount_differs": 1,
        "missing_at_cauri": 1,
        "fee_taken": 1,
        # Each of the above, and the sweep's listed balance: the wallet's end of day differs.
        "balance_differs": 1,
    }
    assert run_["new"] == 6
    found = await discrepancies(database_url, "--connector", CONNECTOR)
    by_kind = {d["kind"]: d for d in found}
    assert by_kind["missing_at_operator"]["operation"] == omitted
    assert by_kind["duplicate_at_operator"]["operation"] == twice
    assert by_kind["amount_differs"]["details"] == {"operator": 1500, "cauri": 1000}
    assert by_kind["missing_at_cauri"]["details"]["amount"] == 700
    # Wave's 1 % on each checkout it listed (10 each: the duplicate too, not the omitted one)
    # and on the payout: what its wallet lost that no operation of Cauri's accounts for.
    assert by_kind["fee_taken"]["details"] == {"amount": 40, "lines": 4}
    assert by_kind["fee_taken"]["currency"] == "XOF"

    # The same run again records nothing new.
    again = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    assert (again.json()["new"], again.json()["closed"]) == (0, 0)

    # Finance resolves one, with its reason, in the audit log.
    fee = by_kind["fee_taken"]["id"]
    resolved = await run_cli(
        database_url,
        "reconcile",
        "resolve",
        str(fee),
        "--reason",
        "Frais Wave",
        "--json",
    )
    assert resolved.json()["resolution"] == "Frais Wave"
    twice_resolved = await run_cli(database_url, "reconcile", "resolve", str(fee), "--reason", "x")
    assert twice_resolved.error()["code"] == "conflict"
    assert len(await discrepancies(database_url)) == 5
    assert len(await discrepancies(database_url, "--all")) == 6
    async with runtime.engine.connect() as connection:
        audited = (
            (
                await connection.execute(
                    text(
                        "SELECT action FROM audit_log WHERE action LIKE 'statement.%' "
                        "OR action LIKE 'reconciliation.%' OR action LIKE 'discrepancy.%' "
                        "ORDER BY id"
                    )
                )
            )
            .scalars()
            .all()
        )
    assert audited == [
        "statement.imported",
        "reconciliation.run",
        "reconciliation.run",
        "discrepancy.resolved",
    ]


async def test_a_payment_wave_says_paid_and_cauri_still_waits_for_is_asked_again_and_settles(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    database_url: str,
    tmp_path: Path,
) -> None:
    """The statement is the operator's word that it happened: the operation is asked again
    through the call protocol, whose answer settles it; the next run finds nothing left."""
    day = runtime.clock.now().date().isoformat()
    response = await pay(
        client, merchant.headers(livemode=True), momo_body(operator="wave_sn", phone_number=NUMBER)
    )
    reference = response.json()["data"]["reference"]
    [session] = fake.sessions.values()
    fake.pay(session.id)  # no webhook, and no status query has fallen due yet

    first = await reconcile(database_url, day)

    assert first["discrepancies"] == {"status_differs": 1, "fee_taken": 1, "balance_differs": 1}
    assert first["asked_again"] == 1
    [status] = await discrepancies(database_url, "--kind", "status_differs")
    assert status["details"] == {"operator": "succeeded", "cauri": "pending"}
    # The status query the run queued, due at the CLI's time: the real one, ahead of the
    # test's clock by however long the test has run.
    behind = (datetime.now(UTC) - runtime.clock.now()).total_seconds()
    await run(runtime, worker, max(behind, 0) + 1)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    second = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    assert second.json()["closed"] == 1
    [closed] = [
        d for d in await discrepancies(database_url, "--all") if d["kind"] == "status_differs"
    ]
    assert closed["resolved_by"] == "reconciliation"


async def test_a_payout_wave_reversed_is_a_status_difference(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    database_url: str,
    tmp_path: Path,
) -> None:
    day = runtime.clock.now().date().isoformat()
    await top_up(runtime, merchant.id, 5000, livemode=True)
    payout = await send_payout(
        client, merchant, {"amount": 1000, "phone_number": NUMBER, "operator": "wave_sn"}
    )
    [sent] = fake.payouts.values()
    # Reversed at Wave by someone with the portal, not by Cauri.
    async with httpx.AsyncClient(base_url=fake.base_url) as http:
        answer = await http.post(
            f"/v1/payout/{sent.id}/reverse", headers={"Authorization": f"Bearer {fake.api_key}"}
        )
        assert answer.status_code == 200

    run_ = await reconcile(database_url, day)

    # The reversal gives back what the payout took, fee included: no other amount, only
    # another outcome (review finding: each line was compared on its own), and no fee.
    assert run_["discrepancies"] == {"status_differs": 1, "balance_differs": 1}
    [status] = await discrepancies(database_url, "--kind", "status_differs")
    assert status["details"] == {"operator": "failed", "cauri": "succeeded"}
    assert payout["status"] == "succeeded"
    [balance] = await discrepancies(database_url, "--kind", "balance_differs")
    assert balance["details"]["difference"] == 1000  # back in the wallet, not in the books
    # Finance gives the merchant its money back, as suggested: the wallet and the books
    # agree again.
    shown = await run_cli(database_url, "reconcile", "show", str(status["id"]), "--json")
    assert shown.json()["suggested"] == [f"merchant:{merchant.id}=1000"]
    before = await merchant_available(runtime, merchant.id, livemode=True)
    await resolve(
        database_url, status["id"], "--reason", "Transfert annulé chez Wave",
        "--book", shown.json()["suggested"][0],
    )  # fmt: skip
    assert await merchant_available(runtime, merchant.id, livemode=True) == before + 1000
    rerun = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    assert rerun.json()["closed"] == 1
    assert await discrepancies(database_url) == []


async def test_the_same_file_twice_and_an_unreadable_one_are_refused_whole(
    runtime: Runtime, fake: WaveFake, merchant: MerchantKeys, database_url: str, tmp_path: Path
) -> None:
    fake.statement_own("700", mobile="+221770000000")
    fake.statement_own("800", mobile="+221770000000")
    fake.statement_own("900", mobile="+221770000000")
    day = runtime.clock.now().date().isoformat()
    statement = await fetched(fake, day, tmp_path / "wave.jsonl")
    first = await run_cli(database_url, "reconcile", "import", CONNECTOR, str(statement), "--json")
    assert first.json()["lines"] == 3
    second = await run_cli(database_url, "reconcile", "import", CONNECTOR, str(statement))
    assert second.error()["code"] == "conflict"
    broken = tmp_path / "broken.jsonl"
    good = statement.read_text().splitlines()[0]
    broken.write_text(good + "\n" + good.replace('"amount": "', '"amount": "x') + "\n")
    refused = await run_cli(database_url, "reconcile", "import", CONNECTOR, str(broken))
    assert refused.error()["code"] == "invalid_request"
    assert "ligne" in refused.error()["message"]
    unknown = await run_cli(database_url, "reconcile", "import", "nobody", str(statement))
    assert unknown.error()["code"] == "not_found"
    async with runtime.engine.connect() as connection:
        lines = await connection.scalar(text("SELECT count(*) FROM statement_lines"))
    assert lines == 3


async def test_a_day_is_fetched_once_and_an_operator_without_a_statement_api_is_refused(
    runtime: Runtime, fake: WaveFake, merchant: MerchantKeys, database_url: str
) -> None:
    fake.statement_own("700", mobile="+221770000000")
    day = runtime.clock.now().date().isoformat()
    assert (await reconcile(database_url, day))["discrepancies"] == {
        "missing_at_cauri": 1,
        "balance_differs": 1,  # the 700 in the wallet that no operation of Cauri's moved
    }
    again = await run_cli(
        database_url, "reconcile", "fetch", CONNECTOR, "--date", day, env_vars=SECRET
    )
    assert again.error()["code"] == "conflict"
    fake.revoke()
    refused = await run_cli(
        database_url, "reconcile", "fetch", CONNECTOR, "--date", "2026-01-02", env_vars=SECRET
    )
    assert refused.error()["code"] == "server_error"
    assert "HTTP 401" in refused.error()["message"]


async def test_the_worker_reconciles_each_day_on_its_own(
    runtime: Runtime, worker: Worker, fake: WaveFake, merchant: MerchantKeys, database_url: str
) -> None:
    """Started with the worker (cauri.jobs.started): yesterday's run, queued once, fetches
    Wave's statement and matches it as `cauri reconcile` would, then queues the next day's,
    due at 03:00 UTC the day after it."""
    fake.statement_own("700", mobile="+221770000000")
    today = runtime.clock.now().date()
    await jobs.started(runtime)
    await jobs.started(runtime)  # a second worker starting: still one chain of days
    assert await daily_runs(runtime) == [(today - timedelta(days=1)).isoformat()]
    # The next morning, after 03:00: yesterday is the day the fake's line is on.
    runtime.clock.advance(  # type: ignore[attr-defined]
        seconds=(
            datetime.combine(today + timedelta(days=1), time(4), UTC) - runtime.clock.now()
        ).total_seconds()
    )
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(text("DELETE FROM jobs WHERE kind = 'reconciliation.daily'"))
    await jobs.started(runtime)
    await worker.drain()

    [found] = await discrepancies(database_url, "--kind", "missing_at_cauri")
    assert found["day"] == today.isoformat()
    assert await daily_runs(runtime) == [(today + timedelta(days=1)).isoformat()]
    async with runtime.engine.connect() as connection:
        actors = (
            (
                await connection.execute(
                    text(
                        "SELECT DISTINCT actor_name FROM audit_log WHERE action LIKE 'statement.%'"
                    )
                )
            )
            .scalars()
            .all()
        )
        days = (
            (
                await connection.execute(
                    text(
                        "SELECT after ->> 'day' FROM audit_log WHERE action = 'reconciliation.run' "
                        "ORDER BY id"
                    )
                )
            )
            .scalars()
            .all()
        )
    assert actors == ["worker:reconciliation"]
    # The day before is matched again with this day's statement in (review finding: a
    # request of 23:59 is booked on the next day's).
    assert days[-2:] == [(today - timedelta(days=1)).isoformat(), today.isoformat()]


async def daily_runs(runtime: Runtime) -> list[str]:
    async with runtime.engine.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT payload ->> 'day' FROM jobs WHERE kind = 'reconciliation.daily' "
                "AND status = 'queued'"
            )
        )
        return list(rows.scalars())


async def test_a_day_fetched_then_imported_again_is_not_counted_twice(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    database_url: str,
    tmp_path: Path,
) -> None:
    """Review finding: a movement in two statements (the day fetched, then its pages saved
    otherwise and imported) was matched twice: a duplicate at the operator for each."""
    day = runtime.clock.now().date().isoformat()
    await paid(client, runtime, worker, fake, merchant)
    fake.statement_own("700", mobile="+221770000000")
    first = await reconcile(database_url, day)
    found = {"missing_at_cauri": 1, "fee_taken": 1, "balance_differs": 1}
    assert first["discrepancies"] == found
    fake.transactions_page_size = 1  # the same movements, other bytes
    again = await fetched(fake, day, tmp_path / "again.jsonl")
    imported = await run_cli(database_url, "reconcile", "import", CONNECTOR, str(again), "--json")
    assert imported.json()["lines"] == 2
    rerun = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    assert rerun.json()["discrepancies"] == found
    assert rerun.json()["new"] == 0


async def test_two_like_payouts_without_a_reference_are_two_pairs(
    client: httpx.AsyncClient,
    runtime: Runtime,
    fake: WaveFake,
    merchant: MerchantKeys,
    database_url: str,
) -> None:
    """Review finding: matched by likeness in one pass, two payouts of one amount to one
    number within the hour were one pair, the other line missing at Cauri and the other
    operation missing at the operator."""
    day = runtime.clock.now().date().isoformat()
    await top_up(runtime, merchant.id, 5000, livemode=True)
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "wave_sn"}
    for _ in range(2):
        assert (await send_payout(client, merchant, body))["status"] == "succeeded"
    for sent in fake.payouts.values():
        assert sent.client_reference is not None
        fake.statement_anonymous(sent.client_reference)
    run_ = await reconcile(database_url, day)
    assert run_["discrepancies"] == {"fee_taken": 1, "balance_differs": 1}
    assert run_["matched"] == 2


async def test_a_day_fetched_without_a_line_still_says_what_is_missing_from_it(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    database_url: str,
) -> None:
    """A fetched statement covers the day it was asked for, lines or not: Wave listing
    nothing on a day Cauri was paid is a payment missing at the operator."""
    day = runtime.clock.now().date().isoformat()
    _, omitted = await paid(client, runtime, worker, fake, merchant)
    fake.statement_omit(omitted)
    run_ = await reconcile(database_url, day)
    assert run_["discrepancies"] == {"missing_at_operator": 1}


async def resolve(database_url: str, discrepancy: int, *args: str) -> dict[str, Any]:
    resolved = await run_cli(
        database_url, "reconcile", "resolve", str(discrepancy), *args, "--json", env_vars=SECRET
    )
    assert resolved.exit_code == 0, resolved.stderr
    shown: dict[str, Any] = resolved.json()
    return shown


async def wallet(runtime: Runtime) -> int:
    """What the ledger says is in the connector account's Wave wallet."""
    async with runtime.sessionmaker() as session:
        return await movements.wallet_balance(session, CONNECTOR, True, "XOF")


async def test_the_wallet_agrees_with_wave_once_its_fees_are_booked(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    database_url: str,
) -> None:
    """The connector account's wallet in the ledger — opened at the balance Wave states
    before its first line, moved by each operation Wave carried out and by the sweep to the
    bank — ends the day at Wave's closing balance but for Wave's fees; booked by finance as
    the platform's cost, nothing differs, and a rerun books nothing twice."""
    day = runtime.clock.now().date().isoformat()
    for _ in range(2):
        await paid(client, runtime, worker, fake, merchant)
    await top_up(runtime, merchant.id, 5000, livemode=True)
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "wave_sn"}
    assert (await send_payout(client, merchant, body))["status"] == "succeeded"
    fake.sweep("100")

    run_ = await reconcile(database_url, day)

    assert run_["discrepancies"] == {"fee_taken": 1, "balance_differs": 1}
    assert run_["booked"] == 2  # the wallet's opening balance and the sweep
    by_kind = {d["kind"]: d for d in await discrepancies(database_url)}
    fees = by_kind["fee_taken"]["details"]["amount"]
    shown = await run_cli(
        database_url, "reconcile", "show", str(by_kind["fee_taken"]["id"]), "--json"
    )
    assert shown.json()["suggested"] == [f"operator_costs=-{fees}"]
    closing = int(fake.balance)
    assert by_kind["balance_differs"]["details"] == {
        "operator": closing,
        "cauri": closing + fees,
        "difference": -fees,
    }
    resolved = await resolve(
        database_url,
        by_kind["fee_taken"]["id"],
        "--reason",
        "Frais Wave du jour",
        "--book",
        f"operator_costs=-{fees}",
    )
    assert resolved["correction"] == {
        "platform:operator_costs:live:XOF": -fees,
        f"connector:{CONNECTOR}:wallet:live:XOF": fees,
    }
    assert await wallet(runtime) == closing

    rerun = await run_cli(database_url, "reconcile", "run", CONNECTOR, "--date", day, "--json")
    assert (rerun.json()["closed"], rerun.json()["booked"]) == (1, 0)
    assert await discrepancies(database_url) == []
    # Wave's balance API says the same now.
    now = await run_cli(database_url, "reconcile", "balances", CONNECTOR, "--json", env_vars=SECRET)
    assert now.rows() == [
        {"connector": CONNECTOR, "currency": "XOF", "operator": closing, "cauri": closing,
         "difference": 0},
    ]  # fmt: skip


async def test_a_correction_the_merchant_cannot_cover_is_held_as_its_receivable(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    database_url: str,
) -> None:
    """Wave sent 1,500 where Cauri asked 1,000: finance charges the merchant the 500, of
    which its balance holds less. What it has is taken, the rest is held as what it owes;
    its balance is never overdrawn."""
    day = runtime.clock.now().date().isoformat()
    await top_up(runtime, merchant.id, 1200, livemode=True)
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "wave_sn"}
    assert (await send_payout(client, merchant, body))["status"] == "succeeded"
    [sent] = fake.payouts.values()
    assert sent.client_reference is not None
    fake.statement_amount(sent.client_reference, "-1510")
    await reconcile(database_url, day)
    [differs] = await discrepancies(database_url, "--kind", "amount_differs")
    left = await merchant_available(runtime, merchant.id, livemode=True)
    assert 0 < left < 500
    shown = await run_cli(database_url, "reconcile", "show", str(differs["id"]), "--json")
    assert shown.json()["suggested"] == [f"merchant:{merchant.id}=-500"]

    resolved = await resolve(
        database_url,
        differs["id"],
        "--reason",
        "Wave a envoyé 500 de trop : à la charge du marchand",
        "--book",
        f"merchant:{merchant.id}=-500",
    )

    assert resolved["correction"] == {
        f"merchant:{merchant.id}:available:live:XOF": -left,
        f"merchant:{merchant.id}:receivable:live:XOF": -(500 - left),
        f"connector:{CONNECTOR}:wallet:live:XOF": 500,
    }
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    # The merchant's own books see it: a line of its balance transactions.
    lines = await client.get(
        "/api/v1/balance/transactions",
        params={"type": "adjustment"},
        headers=merchant.headers(livemode=True),
    )
    [line] = lines.json()["data"]
    assert (line["net"], line["source"]) == (-left, f"discrepancy:{differs['id']}")
    wrong = await run_cli(
        database_url, "reconcile", "resolve", str(differs["id"]), "--reason", "x",
        "--book", "merchant=-5",
    )  # fmt: skip
    assert wrong.error()["code"] in ("invalid_request", "conflict")


async def test_a_correction_above_the_dual_amount_waits_for_a_second_person(
    runtime: Runtime, fake: WaveFake, merchant: MerchantKeys, database_url: str
) -> None:
    """A correction that moves more than the platform's dual-approval amount is asked by
    one person and booked on a second one's approval; its discrepancy stays open until then."""
    fake.statement_own("70000", mobile="+221770000000")
    day = runtime.clock.now().date().isoformat()
    await reconcile(database_url, day)
    [unknown] = await discrepancies(database_url, "--kind", "missing_at_cauri")
    await dual_above(runtime, 50_000)
    awa = await make_staff(runtime, "awa@cauri.example", "finance")
    binta = await make_staff(runtime, "binta@cauri.example", "finance")
    asked = await resolve(
        database_url, unknown["id"], "--reason", "Dépôt d'une autre intégration",
        "--book", "suspense=70000", "--as", awa.email, "--totp", awa.code(),
    )  # fmt: skip
    pending = asked["pending_approval"]
    assert (pending["kind"], pending["amount"]) == ("discrepancy.resolve", 70_000)
    assert len(await discrepancies(database_url, "--kind", "missing_at_cauri")) == 1
    approved = await run_cli(
        database_url, "approvals", "approve", pending["id"], "--as", binta.email, "--totp",
        binta.code(steps_ahead=1), env_vars=SECRET,
    )  # fmt: skip
    assert approved.exit_code == 0, approved.stderr
    assert await discrepancies(database_url, "--kind", "missing_at_cauri") == []
    shown = (await run_cli(database_url, "reconcile", "show", str(unknown["id"]), "--json")).json()
    assert shown["correction"] == {
        "platform:suspense:live:XOF": 70_000,
        f"connector:{CONNECTOR}:wallet:live:XOF": -70_000,
    }
    assert shown["resolved_by"] == binta.email


async def test_the_same_statement_imported_twice_at_once_is_one_statement(
    runtime: Runtime, fake: WaveFake, merchant: MerchantKeys, tmp_path: Path
) -> None:
    """Review finding: two fetches of one day at once both passed the digest check, and
    the second failed on the unique index (a 500) instead of being told it is there."""
    fake.statement_own("700", mobile="+221770000000")
    statement = await fetched(fake, runtime.clock.now().date().isoformat(), tmp_path / "w.jsonl")

    async def once() -> object:
        try:
            async with unit_of_work(runtime.sessionmaker) as session:
                return await import_file(
                    session, CONNECTOR, statement, Actor.cli(), runtime.clock.now(), UTC_DAYS
                )
        except Conflict as refused:
            return refused

    results = await asyncio.gather(once(), once())

    assert sorted(type(result).__name__ for result in results) == ["Conflict", "Imported"]
