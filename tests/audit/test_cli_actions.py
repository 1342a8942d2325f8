"""Every CLI command that changes something writes one audit entry (issue 14): the actor
`cli:<os user>`, the action and its resource, the state before and after, the reason
given; and no secret ever, not a key, a webhook secret or a connector credential."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from cauri.audit.actor import Actor
from cauri.kit.clock import ManualClock
from cauri.models import ApiKey, Reconciliation
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.audit.builders import entries
from tests.calls.builders import UNKNOWN, ScriptedNetwork, operation_of
from tests.connectors.builders import SECRET, cauri
from tests.payments.builders import pay
from tests.payouts.builders import create, live_operator, set_limits, top_up
from tests.plans.test_resolution import failed_plan
from tests.support import make_merchant, momo_body, webhook_secrets_in_clear

Entry = dict[str, Any]
MTN_SECRETS = (
    "api_user",
    "api_key",
    "collection_subscription_key",
    "disbursement_subscription_key",
)


@dataclass
class Step:
    """A command, the entry it must write, and what that entry must say changed."""

    args: list[str]
    action: str
    resource: str  # TYPE:ID
    check: Callable[[Entry], None]
    reason: str | None = None
    exit_code: int = 0


def changed(**fields: tuple[Any, Any]) -> Callable[[Entry], None]:
    """Each field went from its first value (`before` None: absent) to its second."""

    def check(entry: Entry) -> None:
        for name, (old, new) in fields.items():
            assert (entry["before"] or {}).get(name) == old, (name, entry)
            assert entry["after"][name] == new, (name, entry)

    return check


def exactly(before: Any, after: Any) -> Callable[[Entry], None]:
    def check(entry: Entry) -> None:
        assert (entry["before"], entry["after"]) == (before, after), entry

    return check


def keys_added(entry: Entry) -> None:
    """One more key, each known by its hint only."""
    assert len(entry["after"]["keys"]) == len(entry["before"]["keys"]) + 1
    for key in entry["after"]["keys"]:
        assert set(key) == {
            "id", "merchant_id", "livemode", "key_hint", "created_at", "expires_at", "revoked_at",
        }  # fmt: skip


def revoked(entry: Entry) -> None:
    assert entry["before"]["revoked_at"] is None and entry["after"]["revoked_at"] is not None


async def run_steps(database_url: str, runtime: Runtime, steps: list[Step]) -> list[str]:
    """Runs each step, checks its one entry; returns everything the commands printed."""
    printed: list[str] = []
    actor = Actor.cli()
    for step in steps:
        before = len(await entries(runtime))
        result = await cauri(database_url, *step.args)
        printed += [result.stdout, result.stderr]
        assert result.exit_code == step.exit_code, (step.args, result.stderr)
        new = (await entries(runtime))[before:]
        assert len(new) == 1, (step.args, new)
        [entry] = new
        assert (entry["actor_kind"], entry["actor_name"]) == ("cli", actor.name)
        assert entry["staff_account_id"] is None
        assert entry["action"] == step.action, step.args
        assert f"{entry['resource_type']}:{entry['resource_id']}" == step.resource, step.args
        assert entry["reason"] == step.reason, step.args
        step.check(entry)
    return printed


def assert_no_secret(logged: list[Entry], secrets: list[str]) -> None:
    text = json.dumps(logged, ensure_ascii=False)
    for secret in secrets:
        assert secret not in text
    for shape in ("sk_test_", "sk_live_", "whsec_", SECRET):
        assert shape not in text


async def test_each_command_writes_one_entry_without_a_secret(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, tmp_path: Path
) -> None:
    live_operator(runtime)
    created = await cauri(database_url, "merchants", "create", "--name", "Chez Awa", "--json")
    shown = created.json()
    [entry] = await entries(runtime)
    assert (entry["action"], entry["resource_type"], entry["resource_id"]) == (
        "merchant.create",
        "merchant",
        shown["id"],
    )
    assert (entry["actor_name"], entry["before"]) == (Actor.cli().name, None)
    assert (entry["after"]["name"], entry["after"]["status"]) == ("Chez Awa", "active")
    assert [key["livemode"] for key in entry["after"]["keys"]] == [False, True]

    merchant = await make_merchant(runtime)
    m = merchant.id
    await top_up(runtime, m, 50_000, livemode=True)
    await set_limits(runtime, m, approval_threshold=1_000)
    held = [
        (await create(client, merchant.headers(livemode=True), amount=2_000)).json()["data"][
            "reference"
        ]
        for _ in range(2)
    ]
    configured = await client.put(
        "/api/v1/webhooks/endpoint",
        json={"url": "http://127.0.0.1:9/hook"},
        headers=merchant.headers(),
    )
    assert configured.status_code == 200, configured.text
    sent = await client.post("/api/v1/webhooks/test", headers=merchant.headers())
    delivery = sent.json()["data"]["delivery_id"]
    secret_args = []
    for name in MTN_SECRETS:
        (tmp_path / name).write_text(f"{SECRET}-{name}\n")
        secret_args += ["--secret", f"{name}=@{tmp_path / name}"]
    async with runtime.sessionmaker() as session:
        [test_key] = await session.scalars(
            select(ApiKey.id).where(ApiKey.merchant_id == m, ApiKey.livemode.is_(False))
        )
    fee_rule = {"percent": 2.5, "fixed": 0, "fixed_eur": 0, "fixed_usd": 0, "disabled": False}
    mtn_bj = [
        "mtn-bj", "--kind", "mtn_momo", "--environment", "sandbox",
        "--base-url", "http://127.0.0.1:9", "--setting", "target_environment=sandbox",
    ]  # fmt: skip

    steps = [
        Step(
            ["merchants", "set-fee", m, "--operator", "MTN", "--percent", "2.5"],
            "merchant.set_fee",
            f"merchant:{m}",
            exactly({"fee_rules": {}}, {"fee_rules": {"mtn": fee_rule}}),
        ),
        Step(
            ["merchants", "set-fee-bearer", m, "merchant"],
            "merchant.set_fee_bearer",
            f"merchant:{m}",
            exactly({"fee_bearer": "customer"}, {"fee_bearer": "merchant"}),
        ),
        Step(
            [
                "merchants",
                "set-payout-account",
                m,
                "--phone-number",
                "22997000000",
                "--operator",
                "mtn",
                "--validated",
            ],
            "merchant.set_payout_account",
            f"merchant:{m}",
            changed(
                payout_phone=(None, "22997000000"),
                payout_operator=(None, "mtn"),
                payout_validated=(False, True),
            ),
        ),
        Step(
            ["merchants", "set-limits", m, "--daily", "500000"],
            "merchant.set_limits",
            f"merchant:{m}",
            changed(limit_daily=(None, 500_000), approval_threshold=(1_000, 1_000)),
        ),
        Step(
            [
                "merchants",
                "credit",
                m,
                "--mode",
                "live",
                "--amount",
                "5000",
                "--reason",
                "virement 2026-042",
            ],
            "merchant.credit",
            f"merchant:{m}",
            exactly(
                {"livemode": True, "currency": "XOF", "available": 50_000},
                {"livemode": True, "currency": "XOF", "available": 55_000},
            ),
            reason="virement 2026-042",
        ),
        Step(["keys", "create", m, "--mode", "test"], "key.create", f"merchant:{m}", keys_added),
        Step(
            ["keys", "rotate", m, "--mode", "live", "--grace", "1h"],
            "key.rotate",
            f"merchant:{m}",
            keys_added,
        ),
        Step(["keys", "revoke", str(test_key)], "key.revoke", f"api_key:{test_key}", revoked),
        Step(
            ["settings", "set", "--fee-percent", "1.5", "--payout-dual-approval-above", "90000"],
            "settings.set",
            "platform_settings:1",
            changed(fee_percent=(None, 1.5), payout_dual_approval_above=(None, 90_000)),
        ),
        Step(
            ["payouts", "approve", held[0], "--reason", "bénéficiaire vérifié"],
            "payout.approve",
            f"payout:{held[0]}",
            changed(
                approval=("required", "approved"),
                debited=(False, True),
                approvals=([], [Actor.cli().name]),
            ),
            reason="bénéficiaire vérifié",
        ),
        Step(
            ["payouts", "reject", held[1], "--reason", "doublon"],
            "payout.reject",
            f"payout:{held[1]}",
            changed(approval=("required", "rejected"), status=("pending", "failed")),
            reason="doublon",
        ),
        Step(
            ["connectors", "add", *mtn_bj, *secret_args],
            "connector.add",
            "connector:mtn-bj",
            changed(secret_names=(None, sorted(MTN_SECRETS)), kind=(None, "mtn_momo")),
        ),
        Step(
            ["connectors", "check", "mtn-bj"],
            "connector.check",
            "connector:mtn-bj",
            changed(check_ok=(None, False)),
            exit_code=1,  # nothing answers there: the verdict is kept all the same
        ),
        Step(
            ["routes", "set", "MTN", "--collect", "mtn-bj"],
            "route.set",
            "route:mtn",
            exactly({}, {"collect": "mtn-bj"}),
        ),
        Step(
            ["webhooks", "resend", delivery],
            "webhook_delivery.resend",
            f"webhook_delivery:{delivery}",
            changed(status=("pending", "pending"), merchant_id=(m, m)),
        ),
        Step(
            ["merchants", "set-status", m, "suspended"],
            "merchant.set_status",
            f"merchant:{m}",
            exactly({"status": "active"}, {"status": "suspended"}),
        ),
    ]
    printed = await run_steps(database_url, runtime, steps)

    logged = await entries(runtime)
    assert len(logged) == 1 + len(steps)
    new_keys = [
        line.removeprefix("key: ")
        for out in printed
        for line in out.splitlines()
        if line.startswith("key: ")
    ]
    assert len(new_keys) == 2
    assert_no_secret(
        logged,
        [
            shown["test_key"],
            shown["live_key"],
            merchant.test_key,
            merchant.live_key,
            *new_keys,
            *await webhook_secrets_in_clear(runtime),
        ],
    )


async def test_plans_resolve_writes_an_entry(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    database_url: str,
) -> None:
    _, reference = await failed_plan(client, runtime, clock, worker)
    steps = [
        Step(
            ["plans", "resolve", reference, "--release-to-merchant", "--reason", "remboursé"],
            "plan.release_to_merchant",
            f"plan:{reference}",
            changed(resolution=(None, "released_to_merchant"), status=("failed", "failed")),
            reason="remboursé",
        )
    ]
    await run_steps(database_url, runtime, steps)


async def test_exchanges_settle_and_resend_write_an_entry(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    network = ScriptedNetwork()
    runtime.operators.live_adapters["mtn"] = network
    merchant = await make_merchant(runtime)
    network.send["22997123456"] = UNKNOWN
    response = await pay(
        client, merchant.headers(livemode=True), momo_body(phone_number="22997123456")
    )
    payment = response.json()["data"]["reference"]
    operation = str((await operation_of(runtime, payment))["id"])
    steps = [
        Step(
            ["exchanges", "settle", operation, "succeeded", "--reason", "MTN, ticket 4411"],
            "operation.settle",
            f"operator_operation:{operation}",
            changed(status=("pending", "succeeded"), subject_ref=(payment, payment)),
            reason="MTN, ticket 4411",
        ),
        Step(
            ["exchanges", "resend", payment],
            "operation.resend_notification",
            f"operator_operation:{operation}",
            changed(answer=(None, "already succeeded: nothing to ask")),
        ),
    ]
    await run_steps(database_url, runtime, steps)


async def test_exports_and_the_ledger_check_write_an_entry(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    """Reads that leave a trace: a file of payments or of the audit log taken off the
    platform (by its filters, recorded as it starts), and a reconciliation run."""
    merchant = await make_merchant(runtime)
    paid = await pay(client, merchant.headers(), momo_body())
    day = paid.json()["data"]["created_at"][:10]

    def filtered(entry: Entry) -> None:
        assert entry["before"] is None
        assert (entry["after"]["merchant_id"], entry["after"]["livemode"]) == (merchant.id, False)
        assert entry["after"]["period"]["start"].startswith(day)

    def audit_filter(entry: Entry) -> None:
        assert entry["after"]["action"] == "export.download"

    steps = [
        Step(
            [
                "export",
                "payments",
                "--from",
                day,
                "--to",
                day,
                "--merchant",
                merchant.id,
                "--mode",
                "test",
            ],
            "export.download",
            "export:payments",
            filtered,
        ),
        Step(
            ["audit", "export", "--action", "export.download"],
            "audit.export",
            "audit_log:audit_log",
            audit_filter,
        ),
    ]
    exported, _, audit_file, _ = await run_steps(database_url, runtime, steps)
    assert paid.json()["data"]["reference"] in exported
    assert "export.download" in audit_file and "audit.export" not in audit_file

    checked = await cauri(database_url, "ledger", "check", "--json")
    assert checked.exit_code == 0, checked.stderr
    ran = (await entries(runtime))[-1]
    assert (ran["action"], ran["actor_name"]) == ("ledger.reconcile", Actor.cli().name)
    async with runtime.sessionmaker() as session:
        [run_id] = await session.scalars(select(Reconciliation.id))
    assert ran["resource_id"] == str(run_id) and ran["after"]["passed"] is True
