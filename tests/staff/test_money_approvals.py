"""Issue 23, item 6: maker-checker on every live money action above the platform's
`payout_dual_approval_above` (credits, failed plans' resolutions, payouts) and on loosening
that amount, with one rule set (cauri.audit.approvers): each approval names a staff account
(the CLI's `--as EMAIL --totp CODE`), the two are different accounts, and neither created
the other's account or gave it a sign-in link in the last 24 hours. Unset, one person acts,
as always; test mode is never held."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from cauri.audit.actor import Actor
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.errors import CauriError, Conflict
from cauri.models import MoneyApproval
from cauri.runtime import Runtime
from cauri.staff import actions
from cauri.worker.runner import Worker
from tests.calls.builders import SUCCEEDED, ScriptedNetwork
from tests.console.builders import cli, make_staff
from tests.console.test_live_resolution import NEW_NUMBER, live_failed_plan
from tests.payments.builders import merchant_available
from tests.payouts.builders import live_operator, set_limits, top_up
from tests.payouts.test_maker_checker import dual_above, held, state
from tests.plans.test_plan_refunds import live_escrow
from tests.support import make_merchant, scalar

THRESHOLD = 5_000


async def staff(runtime: Runtime, name: str, role: str = "finance") -> Actor:
    member = await make_staff(runtime, f"{name}@cauri.example", role)
    account_id = await scalar(runtime, "SELECT id FROM users WHERE email = :e", e=member.email)
    return Actor.staff(member.email, account_id)


async def act(runtime: Runtime, action: Any, *args: Any, **kwargs: Any) -> Any:
    async with unit_of_work(runtime.sessionmaker) as session:
        return await action(session, runtime, *args, **kwargs)


async def credit(
    runtime: Runtime, actor: Actor, merchant_id: str, amount: int, *, live: bool = True
) -> Any:
    return await act(
        runtime,
        actions.credit_balance,
        actor,
        merchant_id,
        livemode=live,
        amount=Decimal(amount),
        currency="XOF",
        reason="virement reçu",
    )


async def entries(runtime: Runtime) -> list[tuple[str, str]]:
    async with runtime.sessionmaker() as session:
        rows = await session.execute(text("SELECT action, actor_name FROM audit_log ORDER BY id"))
        return [(action, name) for action, name in rows]


async def test_without_the_setting_or_in_test_mode_one_person_credits_at_once(
    runtime: Runtime,
) -> None:
    merchant = await make_merchant(runtime)
    assert await credit(runtime, Actor.cli(), merchant.id, 1_000_000) == 1_000_000
    await dual_above(runtime, THRESHOLD)
    assert await credit(runtime, Actor.cli(), merchant.id, THRESHOLD) == 1_005_000
    assert await credit(runtime, Actor.cli(), merchant.id, 50_000, live=False) == 50_000


async def test_a_live_credit_above_it_waits_for_a_second_person(runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await dual_above(runtime, THRESHOLD)
    awa, binta = await staff(runtime, "awa"), await staff(runtime, "binta")
    with pytest.raises(Conflict, match="--as EMAIL --totp CODE"):
        await credit(runtime, Actor.cli(), merchant.id, THRESHOLD + 1)

    pending = await credit(runtime, awa, merchant.id, THRESHOLD + 1)
    assert isinstance(pending, MoneyApproval)
    assert (pending.kind, pending.amount, pending.status) == ("merchant.credit", 5_001, "pending")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    for refused in (awa, Actor.cli()):
        with pytest.raises(Conflict):
            await act(runtime, actions.approve_action, refused, str(pending.id), None)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0

    await act(runtime, actions.approve_action, binta, str(pending.id), "vu le relevé")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5_001
    with pytest.raises(Conflict, match="déjà approuvée"):
        await act(runtime, actions.approve_action, binta, str(pending.id), None)
    assert await entries(runtime) == [
        ("approval.request", awa.name),
        ("approval.approve", binta.name),
        ("merchant.credit", binta.name),
    ]


async def test_a_rejection_does_nothing(runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await dual_above(runtime, THRESHOLD)
    awa = await staff(runtime, "awa")
    pending = await credit(runtime, awa, merchant.id, 9_000)
    await act(runtime, actions.reject_action, awa, str(pending.id), "erreur de saisie")
    binta = await staff(runtime, "binta")
    with pytest.raises(Conflict, match="déjà rejetée"):
        await act(runtime, actions.approve_action, binta, str(pending.id), None)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0


@pytest.mark.parametrize("vouching", ["create", "link"])
async def test_nobody_who_set_up_the_other_account_in_the_last_24_hours_is_the_second(
    runtime: Runtime, clock: ManualClock, vouching: str
) -> None:
    """An admin who creates an account, or gives it a sign-in link, may hold its sign-in: the
    two of them are one person for a day, whichever asked first."""
    merchant = await make_merchant(runtime)
    await dual_above(runtime, THRESHOLD)
    admin = await staff(runtime, "awa", "admin")
    if vouching == "create":
        await act(runtime, actions.create_staff, admin, email="binta@cauri.example", role="finance")
        await act(runtime, actions.link_staff, Actor.cli(), "binta@cauri.example")
    else:
        await make_staff(runtime, "binta@cauri.example", "finance")
        await act(runtime, actions.link_staff, admin, "binta@cauri.example")
    binta_id = await scalar(runtime, "SELECT id FROM users WHERE email = 'binta@cauri.example'")
    binta = Actor.staff("binta@cauri.example", binta_id)

    by_admin = await credit(runtime, admin, merchant.id, 9_000)
    by_binta = await credit(runtime, binta, merchant.id, 9_000)
    with pytest.raises(Conflict, match="24 heures"):
        await act(runtime, actions.approve_action, binta, str(by_admin.id), None)
    with pytest.raises(Conflict, match="24 heures"):
        await act(runtime, actions.approve_action, admin, str(by_binta.id), None)
    cheikh = await staff(runtime, "cheikh")
    await act(runtime, actions.approve_action, cheikh, str(by_admin.id), None)

    clock.advance(timedelta(hours=24, seconds=1).total_seconds())
    await act(runtime, actions.approve_action, admin, str(by_binta.id), None)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 18_000


async def test_raising_or_unsetting_the_amount_takes_a_second_admin(runtime: Runtime) -> None:
    awa, binta = await staff(runtime, "awa", "admin"), await staff(runtime, "binta", "admin")

    async def set_to(actor: Actor, value: int | None) -> Any:
        return await act(
            runtime,
            actions.set_settings,
            actor,
            {"payout_dual_approval_above": None if value is None else Decimal(value)},
            currency="XOF",
        )

    async def current() -> int | None:
        found: int | None = await scalar(
            runtime, "SELECT payout_dual_approval_above FROM platform_settings"
        )
        return found

    await set_to(Actor.cli(), 10_000)  # where unset: at once, as always
    await set_to(awa, 8_000)  # lower: at once
    assert await current() == 8_000
    raised = await set_to(awa, 20_000)
    unset = await set_to(awa, None)
    assert isinstance(raised, MoneyApproval) and isinstance(unset, MoneyApproval)
    assert await current() == 8_000
    with pytest.raises(Conflict):
        await act(runtime, actions.approve_action, awa, str(raised.id), None)
    await act(runtime, actions.approve_action, binta, str(raised.id), None)
    assert await current() == 20_000
    await act(runtime, actions.approve_action, binta, str(unset.id), None)
    assert await current() is None
    await set_to(awa, 1_000)
    for loosened in (None, Decimal(2_000)):
        with pytest.raises(CauriError, match="changez-le seul"):
            await act(
                runtime,
                actions.set_settings,
                awa,
                {"payout_dual_approval_above": loosened, "fee_percent": Decimal(1)},
                currency="XOF",
            )


async def test_a_live_plan_resolution_above_it_waits_and_keeps_its_entries(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    """The refund to a number goes through the operator's network on the approval: the
    approval's entry and the refund's are committed with the operation, before the call."""
    network = ScriptedNetwork()
    merchant, reference = await live_failed_plan(client, runtime, worker, network)
    await dual_above(runtime, 2_999)
    awa, binta = await staff(runtime, "awa"), await staff(runtime, "binta")
    network.send[NEW_NUMBER] = SUCCEEDED
    pending = await act(
        runtime,
        actions.refund_plan_to,
        awa,
        reference,
        phone_number=NEW_NUMBER,
        operator="mtn",
        reason="nouveau numéro",
    )
    assert isinstance(pending, MoneyApproval)
    assert (pending.amount, pending.params["phone_number"]) == (3_000, NEW_NUMBER)
    assert await live_escrow(runtime, merchant.id, reference) == 3_000
    released = await act(
        runtime, actions.release_plan_to_merchant, binta, reference, reason="payé autrement"
    )
    assert isinstance(released, MoneyApproval)

    await act(runtime, actions.approve_action, binta, str(pending.id), None)
    assert network.sends("disburse")[-1].phone_number == NEW_NUMBER
    assert await live_escrow(runtime, merchant.id, reference) == 0
    with pytest.raises(Conflict):  # the plan has moved on: the other request cannot be done
        await act(runtime, actions.approve_action, awa, str(released.id), None)
    assert await entries(runtime) == [
        ("approval.request", awa.name),
        ("approval.request", binta.name),
        ("approval.approve", binta.name),
        ("plan.refund_to", binta.name),
    ]


async def test_the_cli_names_its_accounts_with_a_code(runtime: Runtime, database_url: str) -> None:
    merchant = await make_merchant(runtime)
    awa = await make_staff(runtime, "awa@cauri.example", "finance")
    binta = await make_staff(runtime, "binta@cauri.example", "finance")
    base = ["merchants", "credit", merchant.id, "--mode", "live", "--reason", "virement"]

    # Unset: the command as it always was.
    done = await cli(database_url, *base, "--amount", "7000", "--json")
    assert done.json()["available"] == 7_000
    await dual_above(runtime, THRESHOLD)
    alone = await cli(database_url, *base, "--amount", "9000")
    assert alone.exit_code == 1 and "--as EMAIL --totp CODE" in alone.stderr
    wrong = await cli(
        database_url, *base, "--amount", "9000", "--as", awa.email, "--totp", awa.wrong_code()
    )
    assert wrong.exit_code == 1 and "wrong_code" in wrong.stderr
    asked = await cli(
        database_url, *base, "--amount", "9000", "--as", awa.email, "--totp", awa.code(), "--json"
    )
    pending = asked.json()["pending_approval"]
    assert (pending["requested_by"], pending["status"]) == (awa.email, "pending")
    listed = await cli(database_url, "approvals", "list")
    assert pending["id"] in listed.stdout

    anonymous = await cli(database_url, "approvals", "approve", pending["id"])
    assert anonymous.exit_code == 1
    approved = await cli(
        database_url,
        "approvals",
        "approve",
        pending["id"],
        "--as",
        binta.email,
        "--totp",
        binta.code(),
    )
    assert approved.exit_code == 0, approved.stderr
    assert await merchant_available(runtime, merchant.id, livemode=True) == 16_000


async def test_a_payout_follows_the_same_rules(client: httpx.AsyncClient, runtime: Runtime) -> None:
    """An admin who just linked a finance account cannot be the second approval of its
    payout, nor can the anonymous CLI be one of two."""
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 100_000, livemode=True)
    await set_limits(runtime, merchant.id, approval_threshold=1_000)
    await dual_above(runtime, THRESHOLD)
    reference = await held(client, merchant, 9_000)
    admin = await staff(runtime, "awa", "admin")
    await make_staff(runtime, "binta@cauri.example", "finance")
    await act(runtime, actions.link_staff, admin, "binta@cauri.example")
    binta_id = await scalar(runtime, "SELECT id FROM users WHERE email = 'binta@cauri.example'")
    binta = Actor.staff("binta@cauri.example", binta_id)

    with pytest.raises(Conflict, match="--as EMAIL --totp CODE"):
        await act(runtime, actions.approve_payout, Actor.cli(), reference, None)
    await act(runtime, actions.approve_payout, binta, reference, None)
    with pytest.raises(Conflict, match="24 heures"):
        await act(runtime, actions.approve_payout, admin, reference, None)
    assert await state(runtime, reference) == ("pending", "required", False)
    await act(runtime, actions.approve_payout, await staff(runtime, "cheikh"), reference, None)
    assert await state(runtime, reference) == ("pending", "approved", True)
