"""DESIGN: operator-facing contract. The installed `cauri` command, run as an operator runs
it, against the database a running app uses: what it changes takes effect at once."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from tests.console.builders import cli, make_staff
from tests.foundation.builders import API, KEYED, run_cli
from tests.support import (
    MerchantKeys,
    assert_error,
    card_body,
    make_merchant,
    momo_body,
    scalar,
)


async def cli_merchant(database_url: str, *args: str) -> MerchantKeys:
    created = (
        await run_cli(
            database_url,
            "merchants",
            "create",
            "--name",
            "Boutique",
            *args,
            "--json",
            env_vars=KEYED,
        )
    ).json()
    return MerchantKeys(created["id"], created["test_key"], created["live_key"])


async def fee_of_new_payment(client: httpx.AsyncClient, merchant: MerchantKeys, amount: int) -> int:
    created = await client.post(
        f"{API}/payments", json=momo_body(amount=amount), headers=merchant.headers()
    )
    assert created.status_code == 201, created.text
    fee: int = created.json()["data"]["fee_amount"]
    assert created.json()["data"]["total_amount"] == amount + fee
    return fee


async def test_merchants_create(client: httpx.AsyncClient, database_url: str) -> None:
    result = await run_cli(
        database_url, "merchants", "create", "--name", "Chez Awa", "--json", env_vars=KEYED
    )
    created = result.json()
    assert set(created) == {"id", "name", "status", "test_key", "live_key"}
    assert created["name"] == "Chez Awa" and created["status"] == "active"
    assert created["test_key"].startswith("sk_test_")
    assert created["live_key"].startswith("sk_live_")
    for key in (created["test_key"], created["live_key"]):
        response = await client.get(f"{API}/payments", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 200, response.text
    made = await client.post(
        f"{API}/payments",
        json=momo_body(),
        headers={"Authorization": f"Bearer {created['test_key']}"},
    )
    assert made.status_code == 201 and made.json()["data"]["livemode"] is False


async def test_merchants_create_with_status(client: httpx.AsyncClient, database_url: str) -> None:
    merchant = await cli_merchant(database_url, "--status", "kyc_pending")
    live = await client.get(f"{API}/payments", headers=merchant.headers(livemode=True))
    assert_error(live, 403, "merchant_inactive")
    assert (await client.get(f"{API}/payments", headers=merchant.headers())).status_code == 200


async def test_set_status_takes_effect_at_once(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime)
    live = merchant.headers(livemode=True)
    assert (await client.get(f"{API}/payments", headers=live)).status_code == 200

    suspended = await run_cli(
        database_url, "merchants", "set-status", merchant.id, "suspended", "--json"
    )
    assert suspended.json() == {"id": merchant.id, "status": "suspended"}
    assert_error(await client.get(f"{API}/payments", headers=live), 403, "merchant_inactive")
    assert (await client.get(f"{API}/payments", headers=merchant.headers())).status_code == 200

    reactivated = await run_cli(database_url, "merchants", "set-status", merchant.id, "active")
    assert reactivated.exit_code == 0, reactivated.stderr
    assert (await client.get(f"{API}/payments", headers=live)).status_code == 200


async def test_set_fee(client: httpx.AsyncClient, runtime: Runtime, database_url: str) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime)
    rule = await run_cli(
        database_url,
        "merchants",
        "set-fee",
        merchant.id,
        "--operator",
        "MTN",
        "--percent",
        "2.5",
        "--fixed",
        "10",
        "--json",
    )
    assert rule.json() == {
        "merchant_id": merchant.id,
        "operator": "mtn",
        "percent": 2.5,
        "fixed": 10,
        "fixed_eur": 0,
        "fixed_usd": 0,
        "disabled": False,
    }
    assert await fee_of_new_payment(client, merchant, 1000) == 25 + 10
    assert await fee_of_new_payment(client, merchant, 1001) == 25 + 10  # 25.025 rounds half up
    assert await fee_of_new_payment(client, other, 1000) == 0  # another account's contract
    modes = (await client.get(f"{API}/payment-modes?country=BJ", headers=merchant.headers())).json()
    mtn = next(mode for mode in modes["data"] if mode["operator"] == "mtn")
    assert mtn["fees"] == {"percent": 2.5, "fixed": 10}


async def test_set_fee_disabled_closes_the_mode(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime)
    result = await run_cli(
        database_url, "merchants", "set-fee", merchant.id, "--operator", "mtn", "--disabled"
    )
    assert result.exit_code == 0, result.stderr
    refused = await client.post(f"{API}/payments", json=momo_body(), headers=merchant.headers())
    assert "operator" in assert_error(refused, 422, "invalid_request")["details"]
    modes = (await client.get(f"{API}/payment-modes", headers=merchant.headers())).json()["data"]
    operators = {mode["operator"] for mode in modes}
    assert "mtn" not in operators and "moov" in operators
    # Only that account loses the mode.
    assert (
        await client.post(f"{API}/payments", json=momo_body(), headers=other.headers())
    ).status_code == 201


async def test_keys_create_with_expiry(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    expires_at = (clock.now() + timedelta(hours=1)).isoformat()
    created = (
        await run_cli(
            database_url,
            "keys",
            "create",
            merchant.id,
            "--mode",
            "test",
            "--expires-at",
            expires_at,
            "--json",
        )
    ).json()
    assert set(created) == {"key"} and created["key"].startswith("sk_test_")
    headers = {"Authorization": f"Bearer {created['key']}"}
    listed = await client.get(f"{API}/payments", headers=headers)
    assert listed.status_code == 200
    clock.advance(hours=1, seconds=1)
    assert_error(await client.get(f"{API}/payments", headers=headers), 401, "key_expired")
    # The keys made with the merchant do not expire.
    assert (await client.get(f"{API}/payments", headers=merchant.headers())).status_code == 200


async def test_keys_create_live(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime)
    key = (
        await run_cli(database_url, "keys", "create", merchant.id, "--mode", "live", "--json")
    ).json()["key"]
    assert key.startswith("sk_live_")
    response = await client.get(f"{API}/payments", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200
    bad = await run_cli(database_url, "keys", "create", merchant.id, "--mode", "prod")
    assert bad.exit_code != 0 and "Traceback" not in bad.stderr


async def test_settings_set_default_fees(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime)
    assert await fee_of_new_payment(client, merchant, 1000) == 0
    result = await run_cli(
        database_url, "settings", "set", "--fee-percent", "1.5", "--fee-fixed", "5", "--json"
    )
    assert result.json()["fee_percent"] == 1.5 and result.json()["fee_fixed"] == 5
    assert await fee_of_new_payment(client, merchant, 1000) == 15 + 5
    # An account's own contract still wins over the platform default.
    (
        await run_cli(
            database_url,
            "merchants",
            "set-fee",
            merchant.id,
            "--operator",
            "mtn",
            "--fixed",
            "1",
            "--json",
        )
    ).json()
    # A whole rule: the percent it omits is 0, not the platform's 1.5.
    assert await fee_of_new_payment(client, merchant, 1000) == 0 + 1


async def test_fixed_fees_per_currency(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    """Fixed amounts are XOF (XAF at par); EUR and USD ones are 0 unless set for them."""
    merchant = await make_merchant(runtime)
    await run_cli(database_url, "settings", "set", "--plan-creation-fee-fixed", "500")
    plans = {}
    for currency in ("XOF", "XAF", "EUR", "USD"):
        created = await client.post(
            f"{API}/installment-plans",
            json={"target_amount": 100, "currency": currency},
            headers=merchant.headers(),
        )
        plans[currency] = created.json()["data"]["creation_fee_amount"]
    assert plans == {"XOF": 500, "XAF": 500, "EUR": 0, "USD": 0}

    result = await run_cli(
        database_url,
        "settings",
        "set",
        "--plan-creation-fee-fixed",
        "2.5",
        "--fee-fixed",
        "0.3",
        "--currency",
        "EUR",
        "--json",
    )
    shown = result.json()
    assert (shown["plan_creation_fee_fixed"], shown["plan_creation_fee_fixed_eur"]) == (500, 2.5)
    assert (shown["fee_fixed"], shown["fee_fixed_eur"], shown["fee_fixed_usd"]) == (0, 0.3, 0)
    eur_plan = await client.post(
        f"{API}/installment-plans",
        json={"target_amount": 100, "currency": "EUR"},
        headers=merchant.headers(),
    )
    assert eur_plan.json()["data"]["creation_fee_amount"] == 2.5
    too_precise = await run_cli(
        database_url, "settings", "set", "--fee-fixed", "0.001", "--currency", "EUR"
    )
    assert too_precise.error()["code"] == "invalid_request"

    rule = await run_cli(
        database_url,
        "merchants",
        "set-fee",
        merchant.id,
        "--operator",
        "visa",
        "--fixed",
        "0.5",
        "--currency",
        "EUR",
        "--json",
    )
    assert rule.json()["fixed_eur"] == 0.5 and rule.json()["fixed"] == 0
    card = card_body(amount=10, currency="EUR")
    paid = await client.post(f"{API}/payments", json=card, headers=merchant.headers())
    assert paid.json()["data"]["fee_amount"] == 0.5


async def test_settings_plan_fee_is_fixed_or_percent(runtime: Runtime, database_url: str) -> None:
    settled = await run_cli(
        database_url, "settings", "set", "--plan-creation-fee-fixed", "100", "--fee-percent", "1"
    )
    assert settled.exit_code == 0, settled.stderr
    refused = await run_cli(
        database_url,
        "settings",
        "set",
        "--plan-creation-fee-fixed",
        "200",
        "--plan-creation-fee-percent",
        "2",
        "--fee-percent",
        "3",
    )
    assert refused.error()["code"] == "invalid_request"
    assert refused.stdout == ""
    row = await scalar(
        runtime,
        "SELECT row(plan_creation_fee_fixed, plan_creation_fee_percent, fee_percent)::text "
        "FROM platform_settings",
    )
    assert row == "(100,,1.0000)"
    # Setting one form of the creation fee clears the other.
    (
        await run_cli(database_url, "settings", "set", "--plan-creation-fee-percent", "2", "--json")
    ).json()
    assert await scalar(runtime, "SELECT plan_creation_fee_fixed FROM platform_settings") is None
    assert await scalar(
        runtime, "SELECT plan_creation_fee_percent FROM platform_settings"
    ) == Decimal(2)


@pytest.mark.parametrize(
    "command",
    [
        ["merchants", "set-status", "mer_unknown", "suspended"],
        ["merchants", "set-fee", "mer_unknown", "--operator", "mtn", "--fixed", "1"],
        ["keys", "create", "mer_unknown", "--mode", "test", "--json"],
    ],
    ids=["set-status", "set-fee", "keys-create"],
)
async def test_unknown_merchant(runtime: Runtime, database_url: str, command: list[str]) -> None:
    result = await run_cli(database_url, *command)
    assert result.error()["code"] == "not_found"
    assert result.stdout == ""
    assert await scalar(runtime, "SELECT count(*) FROM api_keys") == 0
    assert await scalar(runtime, "SELECT count(*) FROM fee_rules") == 0


@pytest.mark.parametrize(
    "command",
    [
        ["merchants", "set-status", "{id}", "closed"],
        ["merchants", "set-fee", "{id}", "--operator", "no_such_operator", "--fixed", "1"],
        ["merchants", "set-fee", "{id}", "--operator", "mtn", "--fixed", "-1"],
        ["settings", "set", "--fee-percent", "101"],
    ],
    ids=["bad-status", "unknown-operator", "negative-fee", "percent-above-100"],
)
async def test_invalid_values_are_refused(
    runtime: Runtime, database_url: str, command: list[str]
) -> None:
    merchant = await make_merchant(runtime)
    result = await run_cli(database_url, *(part.format(id=merchant.id) for part in command))
    assert result.error()["code"] == "invalid_request"
    assert await scalar(runtime, "SELECT status FROM merchants") == "active"
    assert await scalar(runtime, "SELECT count(*) FROM fee_rules") == 0
    assert await scalar(runtime, "SELECT count(*) FROM platform_settings") == 0


async def test_settings_unset_leaves_a_setting_without_a_value(
    runtime: Runtime, database_url: str
) -> None:
    """`--unset`: the dual approval back to never (in its currency), the plan fee to none;
    a setting that always has a value, or an unknown one, is refused and nothing changes."""
    for currency, amount in (("XOF", "90000"), ("EUR", "150")):
        set_one = await run_cli(
            database_url,
            "settings", "set", "--payout-dual-approval-above", amount, "--currency", currency,
        )  # fmt: skip
        assert set_one.exit_code == 0, set_one.stderr
    unset = ["settings", "set", "--unset", "payout-dual-approval-above"]
    # Unsetting a set amount takes two admins (issue 23): asked by one, approved by another.
    alone = await run_cli(database_url, *unset)
    assert alone.exit_code == 1 and "--as EMAIL --totp CODE" in alone.stderr
    awa = await make_staff(runtime, "awa@cauri.example", "admin")
    binta = await make_staff(runtime, "binta@cauri.example", "admin")
    asked = await cli(database_url, *unset, "--as", awa.email, "--totp", awa.code(), "--json")
    pending = asked.json()["pending_approval"]["id"]
    approved = await cli(
        database_url, "approvals", "approve", pending, "--as", binta.email, "--totp", binta.code()
    )
    assert approved.exit_code == 0, approved.stderr
    shown = "SELECT row(payout_dual_approval_above, payout_dual_approval_above_eur)::text"
    assert await scalar(runtime, f"{shown} FROM platform_settings") == "(,15000)"
    for wrong in ("fee-percent", "updated-at"):
        refused = await run_cli(
            database_url, "settings", "set", "--unset", wrong, "--unset", "plan-creation-fee-fixed"
        )
        assert refused.error()["code"] == "invalid_request", wrong
    assert await scalar(runtime, f"{shown} FROM platform_settings") == "(,15000)"
