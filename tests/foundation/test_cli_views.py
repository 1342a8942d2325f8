"""Issue 12, the operator CLI's reads: `merchants list|show`, `settings show`, `payouts list`,
`payments show`, each run as the installed command against the database a running app uses,
with `--json` (stable keys) and text for people. No secret is ever printed."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.engine import make_url

from cauri.cli.output import echo_record
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from tests.calls.builders import SUCCEEDED, ScriptedNetwork
from tests.foundation.builders import API, run_cli
from tests.payments.builders import set_fee
from tests.payouts.builders import (
    approve,
    create,
    live_operator,
    set_limits,
    set_payout_account,
    top_up,
)
from tests.support import make_merchant, momo_body

LIVE_NUMBER = "22997123456"


async def test_merchants_list(runtime: Runtime, database_url: str, clock: ManualClock) -> None:
    empty = await run_cli(database_url, "merchants", "list")
    assert empty.exit_code == 0 and "no merchant" in empty.stdout
    first = await make_merchant(runtime, name="Chez Awa")
    clock.advance(seconds=1)
    second = await make_merchant(runtime, name="Kiosque Koffi", status="suspended")
    clock.advance(seconds=1)
    third = await make_merchant(runtime, name="Boutique Sika")

    rows = (await run_cli(database_url, "merchants", "list", "--json")).rows()
    assert [row["id"] for row in rows] == [third.id, second.id, first.id]  # newest first
    assert rows[1] == {
        "id": second.id,
        "name": "Kiosque Koffi",
        "status": "suspended",
        "fee_bearer": "customer",
        "created_at": rows[1]["created_at"],
    }
    suspended = await run_cli(database_url, "merchants", "list", "--status", "suspended", "--json")
    assert [row["id"] for row in suspended.rows()] == [second.id]
    refused = await run_cli(database_url, "merchants", "list", "--status", "closed")
    assert refused.error()["code"] == "invalid_request" and refused.stdout == ""

    text = await run_cli(database_url, "merchants", "list")
    header, *lines = text.stdout.splitlines()
    assert header.split() == ["id", "name", "status", "fee_bearer", "created_at"]
    assert [line.split()[0] for line in lines] == [third.id, second.id, first.id]


async def test_merchants_show(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime, name="Chez Awa")
    await set_payout_account(runtime, merchant.id, "22997000000", validated=True)
    await set_limits(runtime, merchant.id, per_payout=50_000, approval_threshold=20_000)
    await set_fee(runtime, merchant.id, "mtn", percent="2.5", fixed=10)
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_fee_bearer(session, merchant.id, "merchant")
    await top_up(runtime, merchant.id, 5000, livemode=True)
    paid = await client.post(f"{API}/payments", json=momo_body(), headers=merchant.headers())
    assert paid.json()["data"]["status"] == "succeeded"

    result = await run_cli(database_url, "merchants", "show", merchant.id, "--json")
    shown = result.json()
    assert set(shown) == {
        "id",
        "name",
        "status",
        "fee_bearer",
        "created_at",
        "payout_account",
        "limits",
        "fee_rules",
        "keys",
        "balances",
    }
    assert (shown["id"], shown["name"], shown["status"]) == (merchant.id, "Chez Awa", "active")
    assert shown["fee_bearer"] == "merchant"
    assert shown["payout_account"] == {
        "phone_number": "22997000000",
        "operator": "mtn",
        "validated": True,
    }
    assert shown["limits"] == {"per_payout": 50_000, "daily": None, "approval_threshold": 20_000}
    assert shown["fee_rules"] == [
        {
            "merchant_id": merchant.id,
            "operator": "mtn",
            "percent": 2.5,
            "fixed": 10,
            "fixed_eur": 0,
            "fixed_usd": 0,
            "disabled": False,
        }
    ]
    keys = {key["mode"]: key for key in shown["keys"]}
    assert keys["test"]["hint"] == "sk_test_…" + merchant.test_key[-4:]
    assert keys["live"]["hint"] == "sk_live_…" + merchant.live_key[-4:]
    assert all(key["revoked_at"] is None for key in shown["keys"])
    fee = paid.json()["data"]["fee_amount"]
    assert shown["balances"] == [
        {
            "currency": "XOF",
            "available": 1000 - fee,  # the merchant bears the fee
            "escrowed": 0,
            "pending_payouts": 0,
            "livemode": False,
        },
        {
            "currency": "XOF",
            "available": 5000,
            "escrowed": 0,
            "pending_payouts": 0,
            "livemode": True,
        },
    ]

    text = await run_cli(database_url, "merchants", "show", merchant.id)
    assert text.exit_code == 0, text.stderr
    assert "payout account: 22997000000 (mtn), validated" in text.stdout
    assert "approval above 20000" in text.stdout
    for output in (result.stdout, text.stdout):
        assert merchant.test_key not in output and merchant.live_key not in output
        assert "whsec_" not in output

    unknown = await run_cli(database_url, "merchants", "show", "mer_unknown", "--json")
    assert unknown.error()["code"] == "not_found" and unknown.stdout == ""


async def test_settings_show(runtime: Runtime, database_url: str) -> None:
    secret = "k" * 40
    with_password = make_url(database_url).set(password="hunter2")
    env_vars = {
        "CAURI_SECRET_KEY": secret,
        "CAURI_RATE_LIMIT": "7/minute",
        "CAURI_DATABASE_URL": with_password.render_as_string(hide_password=False),
    }
    result = await run_cli(database_url, "settings", "show", "--json", env_vars=env_vars)
    shown = result.json()
    assert set(shown) == {"platform", "runtime"}
    # Nothing set yet: the defaults that apply.
    assert (
        shown["platform"] | {"fee_percent": 0, "plan_creation_fee_fixed": None} == shown["platform"]
    )
    assert shown["platform"]["plan_creation_fee_percent"] is None
    assert shown["platform"]["updated_at"] is None
    runtime_settings = shown["runtime"]
    assert runtime_settings["CAURI_RATE_LIMIT"] == "7/minute"
    assert runtime_settings["CAURI_SECRET_KEY"] == "set"
    assert runtime_settings["CAURI_METRICS_TOKEN"] == "not set"
    assert runtime_settings["CAURI_DATABASE_URL"].count(":***@") == 1
    assert runtime_settings["CAURI_TEST_SETTLE_DELAY"] == runtime.settings.test_settle_delay
    assert secret not in result.stdout and "hunter2" not in result.stdout

    changed = await run_cli(database_url, "settings", "set", "--fee-percent", "1.5", "--json")
    assert changed.json()["fee_percent"] == 1.5
    after = (await run_cli(database_url, "settings", "show", "--json")).json()
    assert after["platform"] == changed.json() | {"updated_at": after["platform"]["updated_at"]}
    assert after["platform"]["updated_at"] is not None
    assert after["runtime"]["CAURI_SECRET_KEY"] == "not set"

    text = await run_cli(database_url, "settings", "show", env_vars=env_vars)
    assert text.exit_code == 0, text.stderr
    assert "  fee_percent: 1.5" in text.stdout and "  CAURI_SECRET_KEY: set" in text.stdout
    assert secret not in text.stdout and "hunter2" not in text.stdout


async def test_payouts_list_awaiting_approval(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, clock: ManualClock
) -> None:
    live_operator(runtime)
    shop, other = await make_merchant(runtime), await make_merchant(runtime)
    for merchant in (shop, other):
        for livemode in (False, True):
            await top_up(runtime, merchant.id, 50_000, livemode=livemode)
        await set_limits(runtime, merchant.id, approval_threshold=1000)

    async def payout(headers: dict[str, str], amount: int) -> str:
        clock.advance(seconds=1)
        response = await create(client, headers, amount=amount)
        assert response.status_code == 201, response.text
        reference: str = response.json()["data"]["reference"]
        return reference

    sent = await payout(shop.headers(livemode=True), 500)  # under the threshold: sent at once
    held = await payout(shop.headers(livemode=True), 2000)
    in_test = await payout(shop.headers(), 3000)  # test mode: no approval
    other_held = await payout(other.headers(livemode=True), 3000)

    async def listed(*options: str) -> list[str]:
        result = await run_cli(database_url, "payouts", "list", *options, "--json")
        return [row["reference"] for row in result.rows()]

    awaiting = await run_cli(database_url, "payouts", "list", "--awaiting-approval", "--json")
    assert [row["reference"] for row in awaiting.rows()] == [other_held, held]
    row = awaiting.rows()[1]
    assert (row["merchant_id"], row["approval"], row["status"]) == (shop.id, "required", "pending")
    assert (row["amount"], row["currency"], row["livemode"]) == (2000, "XOF", True)
    assert await listed("--awaiting-approval", "--merchant", shop.id) == [held]
    assert await listed() == [other_held, in_test, held, sent]
    assert await listed("--merchant", shop.id, "--mode", "live") == [held, sent]
    assert await listed("--status", "succeeded", "--mode", "live") == [sent]
    assert await listed("--limit", "1") == [other_held]

    await approve(runtime, held)
    assert await listed("--awaiting-approval") == [other_held]
    text = await run_cli(database_url, "payouts", "list", "--awaiting-approval")
    header, line = text.stdout.splitlines()
    assert header.split()[:6] == [
        "created_at",
        "reference",
        "merchant_id",
        "mode",
        "status",
        "approval",
    ]
    assert line.split()[1:6] == [other_held, other.id, "live", "pending", "required"]
    assert LIVE_NUMBER not in text.stdout and "22997000000" not in text.stdout  # masked

    unknown = await run_cli(database_url, "payouts", "list", "--merchant", "mer_unknown")
    assert unknown.error()["code"] == "not_found"
    bad_date = await run_cli(database_url, "payouts", "list", "--from", "hier")
    assert bad_date.error()["code"] == "invalid_request"
    bad_mode = await run_cli(database_url, "payouts", "list", "--mode", "prod")
    assert bad_mode.exit_code == 2 and "Traceback" not in bad_mode.stderr


@pytest.fixture
def network(runtime: Runtime) -> ScriptedNetwork:
    """MTN Bénin opened in live mode through a network: its operations are recorded."""
    scripted = ScriptedNetwork()
    runtime.operators.live_adapters["mtn"] = scripted
    return scripted


async def test_payments_show(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, network: ScriptedNetwork
) -> None:
    merchant = await make_merchant(runtime)
    live = merchant.headers(livemode=True)
    network.send[LIVE_NUMBER] = SUCCEEDED
    paid = await client.post(
        f"{API}/payments", json=momo_body(phone_number=LIVE_NUMBER, external_id="o-7"), headers=live
    )
    payment = paid.json()["data"]
    assert payment["status"] == "succeeded"
    del network.send[LIVE_NUMBER]  # the refund stays pending
    refunded = await client.post(f"{API}/payments/{payment['reference']}/refund", headers=live)
    refund = refunded.json()["data"]

    result = await run_cli(database_url, "payments", "show", payment["reference"], "--json")
    shown = result.json()
    assert set(shown) == {"payment", "refunds", "operations"}
    api_view = (await client.get(f"{API}/payments/{payment['reference']}", headers=live)).json()
    assert shown["payment"] == api_view["data"] | {"merchant_id": merchant.id}
    assert [r["reference"] for r in shown["refunds"]] == [refund["reference"]]
    assert shown["refunds"][0]["status"] == "pending"
    operations = [(op["action"], op["subject_ref"], op["status"]) for op in shown["operations"]]
    assert operations == [
        ("collect", payment["reference"], "succeeded"),
        ("refund", refund["reference"], "pending"),
    ]
    assert all(op["exchanges"] for op in shown["operations"])

    by_identifier = await run_cli(database_url, "payments", "show", payment["identifier"], "--json")
    assert by_identifier.json() == shown

    # The merchant's external_id, as the API takes it (issue 27, friction 5); the same one in
    # the test environment makes the environment needed.
    by_external_id = ("exchanges", "list", "o-7", "--merchant", merchant.id, "--json")
    listed = await run_cli(database_url, *by_external_id)
    assert [op["subject_ref"] for op in listed.rows()] == [payment["reference"]]
    await client.post(
        f"{API}/payments", json=momo_body(external_id="o-7"), headers=merchant.headers()
    )
    ambiguous = await run_cli(database_url, *by_external_id)
    assert ambiguous.error()["code"] == "invalid_request"
    chosen = await run_cli(database_url, *by_external_id, "--mode", "live")
    assert chosen.rows() == listed.rows()
    unknown = await run_cli(database_url, "exchanges", "list", "o-8", "--merchant", merchant.id)
    assert unknown.error()["code"] == "not_found"

    text = await run_cli(database_url, "payments", "show", payment["reference"])
    assert text.exit_code == 0, text.stderr
    assert f"reference: {payment['reference']}" in text.stdout
    assert f"merchant_id: {merchant.id}" in text.stdout
    assert refund["reference"] in text.stdout
    assert "collect mtn via" in text.stdout and "refund mtn via" in text.stdout

    for unknown in ("CAUUNKNOWN", "00000000-0000-0000-0000-000000000000"):
        missing = await run_cli(database_url, "payments", "show", unknown)
        assert missing.error()["code"] == "not_found" and missing.stdout == ""


def test_a_records_text_shows_lists_as_json_not_python(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27, friction 5: `[{'by': 'cli:root'}]` was Python's repr in the text output."""
    echo_record({"approvals": [{"by": "cli:root", "at": None}], "note": None, "sent": True}, False)
    assert capsys.readouterr().out.splitlines() == [
        'approvals: [{"by": "cli:root", "at": null}]',
        "note: -",
        "sent: yes",
    ]
