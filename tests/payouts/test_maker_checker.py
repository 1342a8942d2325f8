"""Maker-checker (issue 14): above the platform's `payout_dual_approval_above`, a held payout
is paid on the approvals of two different people; nobody approves twice; a rejection by
anyone ends it. Under concurrency: paid once, one debit, one operator call, no approval
counted twice."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest
from sqlalchemy import select

from cauri.audit.actor import Actor
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.errors import Conflict, InsufficientFunds
from cauri.models import AuditEntry, Payout
from cauri.payouts.service import payouts
from cauri.platform.service import update_settings
from cauri.runtime import Runtime
from cauri.staff import actions
from cauri.worker.runner import Worker
from tests.console.builders import cli, make_staff
from tests.foundation.builders import run_cli
from tests.payments.builders import merchant_available
from tests.payouts.builders import (
    FakeLiveOperator,
    create,
    ledger_postings_for,
    live_operator,
    set_limits,
    top_up,
)
from tests.payouts.test_cli_approval import cauri, cauri_json
from tests.support import MerchantKeys, make_merchant, scalar

THRESHOLD = 5_000
# Above the amount each approval names a staff account (cauri.audit.approvers).
AWA = Actor.staff("awa@cauri.example", uuid.uuid4())
BINTA = Actor.staff("binta@cauri.example", uuid.uuid4())
CHEIKH = Actor.staff("cheikh@cauri.example", uuid.uuid4())


@pytest.fixture
def fake(runtime: Runtime) -> FakeLiveOperator:
    return live_operator(runtime)


@pytest.fixture
async def merchant(runtime: Runtime) -> MerchantKeys:
    """A live account: payouts above 1,000 XOF held for approval, 100,000 XOF available."""
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 100_000, livemode=True)
    await set_limits(runtime, merchant.id, approval_threshold=1_000)
    return merchant


async def dual_above(runtime: Runtime, amount: int, currency: str = "XOF") -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        await update_settings(
            session,
            {"payout_dual_approval_above": Decimal(amount)},
            runtime.clock.now(),
            currency=currency,
        )


async def held(client: httpx.AsyncClient, merchant: MerchantKeys, amount: int) -> str:
    response = await create(client, merchant.headers(livemode=True), amount=amount)
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert data["awaiting_approval"] is True
    reference: str = data["reference"]
    return reference


async def approve(runtime: Runtime, reference: str, actor: Actor) -> Payout:
    async with unit_of_work(runtime.sessionmaker) as session:
        return await actions.approve_payout(session, runtime, actor, reference, None)


async def reject(runtime: Runtime, reference: str, actor: Actor) -> Payout:
    async with unit_of_work(runtime.sessionmaker) as session:
        return await actions.reject_payout(session, runtime, actor, reference, "doublon")


async def approvers(runtime: Runtime, reference: str) -> list[str]:
    async with runtime.sessionmaker() as session:
        return [a.approver_name for a in await payouts.approvals(session, reference)]


async def state(runtime: Runtime, reference: str) -> tuple[str, str | None, bool]:
    async with runtime.sessionmaker() as session:
        payout = await session.get(Payout, reference)
        assert payout is not None
        return payout.status, payout.approval, payout.debited


async def audited(runtime: Runtime, reference: str) -> list[tuple[str, str]]:
    async with runtime.sessionmaker() as session:
        rows = await session.execute(
            select(AuditEntry.action, AuditEntry.actor_name)
            .where(AuditEntry.resource_id == reference)
            .order_by(AuditEntry.id)
        )
        return [(action, actor) for action, actor in rows]


async def send_jobs(runtime: Runtime, reference: str) -> int:
    count = await scalar(
        runtime,
        "SELECT count(*) FROM jobs WHERE kind = 'payouts.send_approved' "
        "AND payload->>'reference' = :reference",
        reference=reference,
    )
    return int(count)


async def test_without_the_setting_one_approval_pays(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, fake: FakeLiveOperator
) -> None:
    reference = await held(client, merchant, 90_000)
    paid = await approve(runtime, reference, AWA)
    assert (paid.status, paid.approval, paid.debited) == ("pending", "approved", True)
    assert await approvers(runtime, reference) == [AWA.name]


async def test_at_the_threshold_one_approval_pays(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, fake: FakeLiveOperator
) -> None:
    await dual_above(runtime, THRESHOLD)
    reference = await held(client, merchant, THRESHOLD)
    await approve(runtime, reference, AWA)
    assert await state(runtime, reference) == ("pending", "approved", True)
    assert await send_jobs(runtime, reference) == 1


async def test_above_it_two_different_people_must_approve(
    client: httpx.AsyncClient,
    runtime: Runtime,
    merchant: MerchantKeys,
    fake: FakeLiveOperator,
    clock: ManualClock,
    worker: Worker,
) -> None:
    await dual_above(runtime, THRESHOLD)
    reference = await held(client, merchant, THRESHOLD + 1)
    await approve(runtime, reference, AWA)
    # Still held, nothing debited, nothing queued: only its first approval is recorded.
    assert await state(runtime, reference) == ("pending", "required", False)
    assert await approvers(runtime, reference) == [AWA.name]
    assert await merchant_available(runtime, merchant.id, livemode=True) == 100_000
    assert await send_jobs(runtime, reference) == 0

    with pytest.raises(Conflict, match="déjà approuvé") as refused:
        await approve(runtime, reference, AWA)
    assert refused.value.http_status == 409
    assert await approvers(runtime, reference) == [AWA.name]  # nothing written
    assert await audited(runtime, reference) == [("payout.approve", AWA.name)]

    await approve(runtime, reference, BINTA)
    assert await state(runtime, reference) == ("pending", "approved", True)
    assert await approvers(runtime, reference) == [AWA.name, BINTA.name]
    assert await merchant_available(runtime, merchant.id, livemode=True) == 100_000 - 5_001
    clock.advance(1)
    await worker.drain()
    assert [d.reference for d in fake.disbursed] == [reference]
    assert await state(runtime, reference) == ("succeeded", "approved", True)
    with pytest.raises(Conflict, match="n'attend pas d'approbation"):
        await approve(runtime, reference, CHEIKH)
    assert await audited(runtime, reference) == [
        ("payout.approve", AWA.name),
        ("payout.approve", BINTA.name),
    ]


async def test_the_person_is_the_staff_account_not_the_name_shown(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, fake: FakeLiveOperator
) -> None:
    await dual_above(runtime, THRESHOLD)
    reference = await held(client, merchant, 10_000)
    account = uuid.uuid4()
    await approve(runtime, reference, Actor.staff("awa@cauri.example", account))
    with pytest.raises(Conflict):  # the same account under a new email
        await approve(runtime, reference, Actor.staff("awa.diallo@cauri.example", account))
    await approve(runtime, reference, Actor.staff("binta@cauri.example", uuid.uuid4()))
    assert await state(runtime, reference) == ("pending", "approved", True)


async def test_the_threshold_is_in_the_payouts_currency(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, fake: FakeLiveOperator
) -> None:
    await dual_above(runtime, 1, currency="EUR")  # an XOF payout is not concerned
    reference = await held(client, merchant, 50_000)
    await approve(runtime, reference, AWA)
    assert await state(runtime, reference) == ("pending", "approved", True)


async def test_a_rejection_by_anyone_ends_it(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, fake: FakeLiveOperator
) -> None:
    await dual_above(runtime, THRESHOLD)
    reference = await held(client, merchant, 20_000)
    await approve(runtime, reference, AWA)
    rejected = await reject(runtime, reference, AWA)  # even the first approver
    assert (rejected.status, rejected.approval, rejected.debited) == ("failed", "rejected", False)
    with pytest.raises(Conflict):
        await approve(runtime, reference, BINTA)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 100_000
    assert fake.disbursed == []
    assert await audited(runtime, reference) == [
        ("payout.approve", AWA.name),
        ("payout.reject", AWA.name),
    ]


async def test_a_second_approval_the_balance_no_longer_covers_is_not_recorded(
    client: httpx.AsyncClient, runtime: Runtime, fake: FakeLiveOperator
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 30_000, livemode=True)
    await set_limits(runtime, merchant.id, approval_threshold=1_000)
    await dual_above(runtime, THRESHOLD)
    first, second = await held(client, merchant, 20_000), await held(client, merchant, 20_000)
    await approve(runtime, first, AWA)
    await approve(runtime, first, BINTA)
    await approve(runtime, second, AWA)
    with pytest.raises(InsufficientFunds):
        await approve(runtime, second, BINTA)
    assert await state(runtime, second) == ("pending", "required", False)
    assert await approvers(runtime, second) == [AWA.name]


async def test_many_different_approvers_at_once_pay_it_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    merchant: MerchantKeys,
    fake: FakeLiveOperator,
    clock: ManualClock,
    worker: Worker,
) -> None:
    await dual_above(runtime, THRESHOLD)
    reference = await held(client, merchant, 10_000)
    people = [Actor.staff(f"finance{n}@cauri.example", uuid.uuid4()) for n in range(12)]
    results = await asyncio.gather(
        *(approve(runtime, reference, person) for person in people), return_exceptions=True
    )
    errors = [r for r in results if isinstance(r, BaseException)]
    assert all(isinstance(e, Conflict) for e in errors), errors
    # The first two approvals (in lock order) paid it; every later one found it no longer held.
    assert len(errors) == len(people) - 2
    assert len(await approvers(runtime, reference)) == 2
    assert await state(runtime, reference) == ("pending", "approved", True)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 90_000
    assert await send_jobs(runtime, reference) == 1
    debit = await ledger_postings_for(runtime, reference)
    clock.advance(1)
    await worker.drain()
    await worker.drain()
    assert [d.reference for d in fake.disbursed] == [reference]  # one operator call
    assert await state(runtime, reference) == ("succeeded", "approved", True)
    assert await ledger_postings_for(runtime, reference) == debit  # no second debit
    assert [action for action, _ in await audited(runtime, reference)] == ["payout.approve"] * 2


async def test_one_person_approving_many_times_at_once_counts_once(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, fake: FakeLiveOperator
) -> None:
    await dual_above(runtime, THRESHOLD)
    reference = await held(client, merchant, 10_000)
    results = await asyncio.gather(
        *(approve(runtime, reference, AWA) for _ in range(10)), return_exceptions=True
    )
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 9 and all(isinstance(e, Conflict) for e in errors), errors
    assert await approvers(runtime, reference) == [AWA.name]
    assert await state(runtime, reference) == ("pending", "required", False)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 100_000
    assert await send_jobs(runtime, reference) == 0
    assert await ledger_postings_for(runtime, reference) == 0
    assert len(await audited(runtime, reference)) == 1
    assert fake.disbursed == []


async def test_approvals_and_a_rejection_at_once_never_pay_a_rejected_payout(
    client: httpx.AsyncClient,
    runtime: Runtime,
    merchant: MerchantKeys,
    fake: FakeLiveOperator,
    clock: ManualClock,
    worker: Worker,
) -> None:
    await dual_above(runtime, THRESHOLD)
    reference = await held(client, merchant, 10_000)
    await asyncio.gather(
        approve(runtime, reference, AWA),
        reject(runtime, reference, CHEIKH),
        approve(runtime, reference, BINTA),
        return_exceptions=True,
    )
    clock.advance(1)
    await worker.drain()
    status, approval, _ = await state(runtime, reference)
    paid = approval == "approved"
    assert (status, approval) in {("succeeded", "approved"), ("failed", "rejected")}
    assert len(fake.disbursed) == (1 if paid else 0)
    available = await merchant_available(runtime, merchant.id, livemode=True)
    assert available == (90_000 if paid else 100_000)


async def test_the_cli_shows_the_approvals_and_sets_the_threshold(
    client: httpx.AsyncClient, runtime: Runtime, merchant: MerchantKeys, database_url: str
) -> None:
    live_operator(runtime)
    settings = await cauri_json(
        database_url, "settings", "set", "--payout-dual-approval-above", "5000"
    )
    assert settings["payout_dual_approval_above"] == 5000
    assert settings["payout_dual_approval_above_eur"] is None
    reference = await held(client, merchant, 8_000)

    # Above the amount the CLI names its staff account, proven by a code (issue 23).
    alone = await run_cli(database_url, "payouts", "approve", reference)
    assert alone.exit_code == 1 and "--as EMAIL --totp CODE" in alone.stderr
    awa = await make_staff(runtime, "awa@cauri.example", "finance")
    named = ["--as", awa.email]
    first = (
        await cli(
            database_url,
            "payouts",
            "approve",
            reference,
            "--reason",
            "vu",
            *named,
            "--totp",
            awa.code(),
            "--json",
        )
    ).json()
    assert (first["status"], first["approval"]) == ("pending", "required")
    [approval] = first["approvals"]
    assert approval["by"] == awa.email
    assert datetime.fromisoformat(approval["at"]) <= datetime.now(UTC)

    again = await cli(
        database_url, "payouts", "approve", reference, *named, "--totp", awa.code(steps_ahead=1)
    )
    assert (again.exit_code, again.stdout) == (1, "")
    error = json.loads(again.stderr)["error"]
    assert error["code"] == "conflict"
    assert f"Vous avez déjà approuvé le transfert {reference}" in error["message"]

    _, out, _ = await cauri(database_url, "payouts", "list", "--awaiting-approval", "--json")
    [row] = json.loads(out)
    assert [approval["by"] for approval in row["approvals"]] == [awa.email]
    _, out, _ = await cauri(database_url, "payouts", "list", "--awaiting-approval")
    header, line = out.splitlines()
    assert "approved_by" in header.split() and awa.email in line.split()

    # Someone else (a staff member in the console) completes it.
    async with unit_of_work(runtime.sessionmaker) as session:
        await actions.approve_payout(session, runtime, BINTA, reference, None)
    assert await state(runtime, reference) == ("pending", "approved", True)
    assert await approvers(runtime, reference) == [awa.email, BINTA.name]
