"""The approval flow end to end through the operator's CLI, in its own process (DESIGN:
operator-facing contract; payouts held for approval).

The CLI process has no live operator adapter: `cauri payouts approve` debits the balance and
queues the sending, which a worker that has the operator's adapter (here, this process's,
with a fake network) performs.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.foundation.builders import run_cli
from tests.payments.builders import events_of
from tests.payouts.builders import BALANCE, PAYOUTS, create, live_operator, top_up
from tests.support import MerchantKeys, make_merchant


async def cauri(database_url: str, *args: str) -> tuple[int, str, str]:
    result = await run_cli(database_url, *args)
    return result.exit_code, result.stdout, result.stderr


async def cauri_json(database_url: str, *args: str) -> dict[str, Any]:
    code, out, err = await cauri(database_url, *args, "--json")
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


async def _balance(client: httpx.AsyncClient, merchant: MerchantKeys) -> tuple[int, int]:
    [row] = (await client.get(BALANCE, headers=merchant.headers(True))).json()["data"]
    return row["available"], row["pending_payouts"]


async def _payout(client: httpx.AsyncClient, merchant: MerchantKeys, ref: str) -> dict[str, Any]:
    data: dict[str, Any] = (
        await client.get(f"{PAYOUTS}/{ref}", headers=merchant.headers(True))
    ).json()["data"]
    return data


async def test_approve_and_reject_with_the_cli(
    client: httpx.AsyncClient,
    runtime: Runtime,
    database_url: str,
    clock: ManualClock,
    worker: Worker,
) -> None:
    fake = live_operator(runtime)
    merchant = await make_merchant(runtime)
    credited = await cauri_json(
        database_url,
        *("merchants", "credit", merchant.id, "--mode", "live", "--amount", "30000"),
        *("--reason", "virement 2026-001"),
    )
    assert credited["available"] == 30_000
    limits = await cauri_json(
        database_url,
        *("merchants", "set-limits", merchant.id, "--approval-threshold", "10000"),
        *("--daily", "100000"),
    )
    assert (limits["approval_threshold"], limits["daily"], limits["per_payout"]) == (
        10_000,
        100_000,
        None,
    )

    held = (await create(client, merchant.headers(True), amount=12_000)).json()["data"]
    assert (held["status"], held["awaiting_approval"]) == ("pending", True)
    assert await _balance(client, merchant) == (30_000, 12_000)  # counted, not debited
    assert fake.disbursed == []

    approved = await cauri_json(database_url, "payouts", "approve", held["reference"])
    assert (approved["reference"], approved["status"], approved["approval"]) == (
        held["reference"],
        "pending",
        "approved",
    )
    assert await _balance(client, merchant) == (18_000, 12_000)
    # The sending was queued by the CLI at its own (real) clock's time, however long the
    # subprocess took on a busy machine.
    clock.advance((datetime.now(UTC) - clock.now()).total_seconds() + 1)
    await worker.drain()
    assert [d.reference for d in fake.disbursed] == [held["reference"]]
    assert (await _payout(client, merchant, held["reference"]))["status"] == "succeeded"
    assert await _balance(client, merchant) == (18_000, 0)

    other = (await create(client, merchant.headers(True), amount=15_000)).json()["data"]
    assert await _balance(client, merchant) == (18_000, 15_000)
    rejected = await cauri_json(database_url, "payouts", "reject", other["reference"])
    assert (rejected["status"], rejected["approval"]) == ("failed", "rejected")
    assert (rejected["awaiting_approval"], rejected["failure_code"]) == (False, "approval_rejected")
    assert await _balance(client, merchant) == (18_000, 0)
    assert [kind for kind, _ in await events_of(runtime, other["reference"])] == ["payout.failed"]
    assert len(fake.disbursed) == 1

    code, _, err = await cauri(database_url, "payouts", "approve", other["reference"])
    assert code == 1
    assert json.loads(err)["error"]["code"] == "conflict"


async def test_cli_refuses_an_approval_the_balance_does_not_cover(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    await cauri_json(
        database_url,
        *("merchants", "credit", merchant.id, "--mode", "live", "--amount", "5000"),
        *("--reason", "virement"),
    )
    await cauri_json(
        database_url, "merchants", "set-limits", merchant.id, "--approval-threshold", "100"
    )
    held = (await create(client, merchant.headers(True), amount=6000)).json()["data"]
    code, out, err = await cauri(database_url, "payouts", "approve", held["reference"])
    assert (code, out) == (1, "")
    error = json.loads(err)["error"]
    assert error["code"] == "insufficient_funds"
    assert held["reference"] in error["message"]
    still = await _payout(client, merchant, held["reference"])
    assert (still["status"], still["awaiting_approval"]) == ("pending", True)
    assert await _balance(client, merchant) == (5000, 6000)  # still held, still counted


async def test_cli_sets_the_payout_account(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime)
    account = await cauri_json(
        database_url,
        *("merchants", "set-payout-account", merchant.id, "--phone-number", "22961000000"),
        *("--operator", "MOOV", "--validated"),
    )
    assert (account["payout_operator"], account["payout_validated"]) == ("moov", True)
    await top_up(runtime, merchant.id, 3000)
    own = await client.post(PAYOUTS, json={"amount": 1000}, headers=merchant.headers())
    assert own.status_code == 201, own.text
    assert own.json()["data"]["phone_number"] == "2296100****"
