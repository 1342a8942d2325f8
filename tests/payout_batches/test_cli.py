"""`cauri payouts batch FILE` and `cauri payouts batch-show REFERENCE`: a batch on the staff's
word from a CSV or JSON file, made by the worker as the API's, audited; read back with its
items (issue 28)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.conftest import TEST_SECRET_KEY
from tests.console.builders import make_staff
from tests.foundation.builders import run_cli
from tests.payments.builders import merchant_available
from tests.payout_batches.builders import read
from tests.payouts.builders import top_up
from tests.payouts.test_maker_checker import dual_above
from tests.support import make_merchant, scalar


async def _json(database_url: str, *args: str) -> dict[str, Any]:
    result = await run_cli(database_url, *args, "--json")
    assert result.exit_code == 0, result.stderr
    shown: dict[str, Any] = json.loads(result.stdout)
    return shown


CSV = (
    "external_id,amount,operator,phone_number,beneficiary_name,metadata\n"
    'p-1,1000,mtn,22997000000,Koffi,"{""lot"": 1}"\n'
    "p-2,deux mille,mtn,22997000000,,\n"
    "p-3,1500,mtn,22997000000,Awa,\n"
)


async def test_a_csv_file_is_a_batch_made_by_the_worker_and_audited(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    clock: ManualClock,
    database_url: str,
    tmp_path: Path,
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    file = tmp_path / "salaires.csv"
    file.write_text(CSV, encoding="utf-8")
    shown = await _json(database_url, "payouts", "batch", str(file), "--merchant", merchant.id)
    assert shown["merchant_id"] == merchant.id
    assert shown["status"] == "processing"
    assert shown["replayed"] is False
    assert shown["external_id"].startswith("file-")
    assert [item["external_id"] for item in shown["items"]] == ["p-1", "p-2", "p-3"]
    assert shown["items"][1]["error"]["code"] == "invalid_request"
    assert "amount" in shown["items"][1]["error"]["details"]
    # The same file again: the same batch, nothing more.
    again = await _json(database_url, "payouts", "batch", str(file), "--merchant", merchant.id)
    assert (again["reference"], again["replayed"]) == (shown["reference"], True)
    # The command's job is due at its own (real) time: the test's clock catches up.
    clock.advance((datetime.now(UTC) - clock.now()).total_seconds() + 1)
    await worker.drain()
    done = await read(client, merchant.headers(), shown["reference"])
    assert done["status"] == "completed"
    assert done["counts"]["succeeded"] == 2
    payout = await client.get(
        f"/api/v1/payouts/{done['items'][0]['payout']}", headers=merchant.headers()
    )
    assert payout.json()["data"]["metadata"] == {"lot": 1}
    assert payout.json()["data"]["beneficiary_name"] == "Koffi"
    assert await merchant_available(runtime, merchant.id) == 7500
    audited = await scalar(
        runtime,
        "SELECT count(*) FROM audit_log WHERE action = 'payout_batch.create' "
        "AND resource_id = :reference",
        reference=shown["reference"],
    )
    assert audited == 1
    read_back = await _json(database_url, "payouts", "batch-show", shown["reference"])
    assert read_back == {"merchant_id": merchant.id, **done}
    text = await run_cli(database_url, "payouts", "batch-show", shown["reference"])
    assert text.exit_code == 0
    assert "refused items:" in text.stdout
    assert "p-2" in text.stdout


async def test_a_json_file_in_live_and_the_refusals(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, tmp_path: Path
) -> None:
    merchant = await make_merchant(runtime)
    file = tmp_path / "lot.json"
    body = {
        "external_id": "lot-7",
        "items": [{"amount": 1000, "operator": "mtn", "phone_number": "22997000000"}],
    }
    file.write_text(json.dumps(body), encoding="utf-8")
    shown = await _json(
        database_url, "payouts", "batch", str(file), "--merchant", merchant.id, "--mode", "live"
    )
    assert (shown["external_id"], shown["livemode"]) == ("lot-7", True)
    # No external_id on the item: refused at once, so the batch is already complete.
    assert shown["items"][0]["error"]["code"] == "invalid_request"
    assert shown["status"] == "completed"
    # A file that is not a batch, an unknown merchant, a batch refused whole.
    file.write_text('{"nope": 1}', encoding="utf-8")
    wrong = await run_cli(database_url, "payouts", "batch", str(file), "--merchant", merchant.id)
    assert wrong.exit_code == 2
    file.write_text(json.dumps(body), encoding="utf-8")
    unknown = await run_cli(database_url, "payouts", "batch", str(file), "--merchant", "mer_x")
    assert unknown.exit_code == 1
    assert json.loads(unknown.stderr)["error"]["code"] == "not_found"
    file.write_text("[]", encoding="utf-8")
    empty = await run_cli(database_url, "payouts", "batch", str(file), "--merchant", merchant.id)
    assert empty.exit_code == 1
    assert json.loads(empty.stderr)["error"]["code"] == "invalid_request"
    missing = await run_cli(database_url, "payouts", "batch-show", "pyb_nope")
    assert json.loads(missing.stderr)["error"]["code"] == "not_found"


async def test_a_live_batch_above_the_dual_amount_waits_for_a_second_person(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, tmp_path: Path
) -> None:
    """Review finding: one person moved a merchant's live money to any numbers, in any
    amount, from the CLI. Above the platform's dual-approval amount in all, a batch is asked
    by one staff account and made on a second one's approval."""
    merchant = await make_merchant(runtime)
    await dual_above(runtime, 10_000)
    file = tmp_path / "lot.json"
    item = {"amount": 6000, "operator": "mtn", "phone_number": "22997000000"}
    body = {
        "external_id": "lot-8",
        "items": [item | {"external_id": "a"}, item | {"external_id": "b"}],
    }
    file.write_text(json.dumps(body), encoding="utf-8")
    awa = await make_staff(runtime, "awa@cauri.example", "finance")
    binta = await make_staff(runtime, "binta@cauri.example", "finance")
    batch = ["payouts", "batch", str(file), "--merchant", merchant.id, "--mode", "live"]
    secret = {"CAURI_SECRET_KEY": TEST_SECRET_KEY}  # the second factors are sealed with it
    asked = await run_cli(
        database_url, *batch, "--as", awa.email, "--totp", awa.code(), "--json", env_vars=secret
    )
    pending = asked.json()["pending_approval"]
    assert (pending["amount"], pending["kind"]) == (12_000, "payout_batch.create")
    assert await scalar(runtime, "SELECT count(*) FROM payout_batches") == 0
    approved = await run_cli(
        database_url, "approvals", "approve", pending["id"], "--as", binta.email, "--totp",
        binta.code(steps_ahead=1), env_vars=secret,
    )  # fmt: skip
    assert approved.exit_code == 0, approved.stderr
    assert await scalar(runtime, "SELECT count(*) FROM payout_batches") == 1
    # A CSV's amounts, exact numbers, are the same numbers once approved (review finding:
    # kept as text, each item was then refused as "not a JSON number").
    csv_file = tmp_path / "lot.csv"
    csv_file.write_text(
        "external_id,amount,operator,phone_number\n"
        "d,6000,mtn,22997000000\ne,6000,mtn,22997000000\n",
        encoding="utf-8",
    )
    from_csv = ["payouts", "batch", str(csv_file), "--merchant", merchant.id, "--mode", "live"]
    asked_csv = await run_cli(
        database_url, *from_csv, "--as", awa.email, "--totp", awa.code(steps_ahead=1),
        "--json", env_vars=secret,
    )  # fmt: skip
    pending_csv = asked_csv.json()["pending_approval"]
    fatou = await make_staff(runtime, "fatou@cauri.example", "finance")
    approved_csv = await run_cli(
        database_url, "approvals", "approve", pending_csv["id"], "--as", fatou.email,
        "--totp", fatou.code(), env_vars=secret,
    )  # fmt: skip
    assert approved_csv.exit_code == 0, approved_csv.stderr
    refused = "SELECT count(*) FROM payout_batch_items WHERE error IS NOT NULL"
    assert await scalar(runtime, refused) == 0
    # Below the amount, one person sends it, as before.
    small = body | {"external_id": "lot-9", "items": [item | {"external_id": "c"}]}
    file.write_text(json.dumps(small), encoding="utf-8")
    shown = await _json(database_url, *batch)
    assert shown["external_id"] == "lot-9"


async def test_a_batch_whose_job_gave_up_is_resumed_and_completes(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, database_url: str
) -> None:
    """Review finding: a batch whose job failed its every attempt stayed processing, with no
    way to go on."""
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    item = {"amount": 1000, "operator": "mtn", "phone_number": "22997000000"}
    body = {"external_id": "lot-r", "items": [item | {"external_id": "r1"}]}
    sent = await client.post("/api/v1/payout-batches", json=body, headers=merchant.headers())
    reference = sent.json()["data"]["reference"]
    # What the worker leaves of a job that failed its last attempt.
    async with runtime.engine.begin() as connection:
        failed = "UPDATE jobs SET status = 'failed' WHERE kind = 'payout_batches.process'"
        assert (await connection.execute(text(failed))).rowcount == 1
    await worker.drain()
    assert (await read(client, merchant.headers(), reference))["status"] == "processing"
    resumed = await run_cli(database_url, "payouts", "batch-resume", reference)
    assert resumed.exit_code == 0, resumed.stderr
    # Queued at the CLI's time, the real one: ahead of the test's clock by the test's run.
    runtime.clock.advance(  # type: ignore[attr-defined]
        seconds=max((datetime.now(UTC) - runtime.clock.now()).total_seconds(), 0) + 1
    )
    await worker.drain()
    assert (await read(client, merchant.headers(), reference))["status"] == "completed"
    again = await run_cli(database_url, "payouts", "batch-resume", reference)
    assert again.error()["code"] == "conflict"
    audited = "SELECT count(*) FROM audit_log WHERE action = 'payout_batch.resume'"
    assert await scalar(runtime, audited) == 1
