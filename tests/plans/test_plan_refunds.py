"""A cancelled plan's refund is a disbursement row (plan_refunds) through the one lifecycle
of payouts and refunds: debited from the escrow when sent, re-credited once on a definitive
failure, no webhook event (the spec has none about a plan's cancellation)."""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.ledger import accounts, movements
from cauri.ledger.service import balance
from cauri.models import InstallmentPlan
from cauri.plans import jobs, settlement
from cauri.runtime import Runtime
from cauri.worker import queue
from cauri.worker.runner import Worker
from tests.calls.builders import (
    FAILED,
    SUCCEEDED,
    UNKNOWN,
    ScriptedNetwork,
    operation_of,
    poll_after,
)
from tests.plans.builders import (
    PLANS,
    SETTLE_DELAY,
    assert_plan_reconciles,
    cancel,
    count,
    create_plan,
    escrow,
    fetch,
    paid_instalment,
    penalised_plan,
)
from tests.support import MerchantKeys, make_merchant, momo_body, scalar

MIGRATION = Path(__file__).parents[2] / "migrations/versions/2026_11_24_1920-0011_plan_refunds.py"

NETWORK_NUMBER = "22997123456"


async def plan_refund(runtime: Runtime, plan: str) -> dict[str, Any]:
    """The plan's one refund row."""
    async with runtime.sessionmaker() as session:
        row = (
            await session.execute(
                text("SELECT * FROM plan_refunds WHERE CAST(plan_id AS text) = :plan"),
                {"plan": plan},
            )
        ).one()
    return dict(row._mapping)


async def ledger_kinds(runtime: Runtime, reference: str) -> list[str]:
    kinds = await scalar(
        runtime,
        "SELECT coalesce(array_agg(kind ORDER BY id), '{}') FROM ledger_transactions "
        "WHERE reference = :r",
        r=reference,
    )
    return list(kinds)


async def live_escrow(runtime: Runtime, merchant_id: str, plan: str) -> int:
    async with runtime.sessionmaker() as session:
        return await balance(session, accounts.plan_escrow(merchant_id, plan, True, "XOF"))


async def cancelled_plan(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker, number: str
) -> tuple[MerchantKeys, str]:
    """A plan paid 3,000 from `number` with a 10 % penalty, then cancelled: its refund of
    2,700 is started by the worker."""
    merchant, reference = await penalised_plan(client, runtime)
    await paid_instalment(client, merchant, reference, number, 3_000)
    clock.advance(SETTLE_DELAY + 1)  # any delayed instalment outcome is behind us
    await worker.drain()
    assert (await cancel(client, merchant, reference)).status_code == 200
    await worker.drain()
    return merchant, reference


async def test_a_pending_plan_refund_is_a_debited_row(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant, reference = await cancelled_plan(client, runtime, clock, worker, "22997000002")
    refund = await plan_refund(runtime, reference)
    operator = await scalar(
        runtime, "SELECT operator FROM payments WHERE CAST(plan_id AS text) = :p", p=reference
    )
    assert refund["reference"].startswith("prf_")
    assert (refund["status"], refund["amount"], refund["currency"]) == ("pending", 2_700, "XOF")
    assert (refund["phone_number"], refund["operator"]) == ("22997000002", operator)
    assert (refund["merchant_id"], refund["livemode"], refund["debited"]) == (
        merchant.id,
        False,
        True,
    )
    assert await ledger_kinds(runtime, refund["reference"]) == ["plan_refund"]
    assert await escrow(runtime, merchant.id, reference) == 0
    assert (await fetch(client, merchant, reference))["status"] == "pending"
    await assert_plan_reconciles(runtime, reference)


async def test_a_refund_failed_later_is_re_credited_to_the_escrow_once_and_fails_the_plan(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant, reference = await cancelled_plan(client, runtime, clock, worker, "22997000003")
    assert await escrow(runtime, merchant.id, reference) == 0  # sent: out of the escrow
    for _ in range(2):  # a second pass finds nothing left to do
        clock.advance(SETTLE_DELAY + 1)
        await worker.drain()
    refund = await plan_refund(runtime, reference)
    assert (refund["status"], refund["debited"]) == ("failed", False)
    assert refund["failure_reason"] == "refused_after_initiation"
    assert refund["completed_at"] is not None
    assert await ledger_kinds(runtime, refund["reference"]) == [
        "plan_refund",
        "plan_refund_reversal",
    ]
    fetched = await fetch(client, merchant, reference)
    assert fetched["status"] == "failed"
    assert (await scalar(runtime, "SELECT refund_failure_reason FROM installment_plans")) == (
        "refused_after_initiation"
    )
    assert await escrow(runtime, merchant.id, reference) == 2_700  # for support to pay out
    await assert_plan_reconciles(runtime, reference)


async def test_a_refund_refused_at_initiation_takes_nothing(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant, reference = await penalised_plan(client, runtime)
    # No collection from a number ending 0001 succeeds in test mode: paid from another
    # number, then re-numbered, so the refund goes to a number the simulator refuses.
    payment = await paid_instalment(client, merchant, reference, "22997000000", 3_000)
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text("UPDATE payments SET phone_number = '22997000001' WHERE CAST(id AS text) = :id"),
            {"id": payment},
        )
    assert (await cancel(client, merchant, reference)).status_code == 200
    await worker.drain()
    refund = await plan_refund(runtime, reference)
    assert (refund["status"], refund["debited"]) == ("failed", False)
    assert refund["failure_reason"] == "refused_at_initiation"
    assert await ledger_kinds(runtime, refund["reference"]) == []  # no debit, no reversal
    assert (await fetch(client, merchant, reference))["status"] == "failed"
    assert await escrow(runtime, merchant.id, reference) == 2_700
    assert await count(runtime, "SELECT count(*) FROM jobs WHERE kind LIKE 'plans.refund%'") == 0
    await assert_plan_reconciles(runtime, reference)


@pytest.mark.parametrize("number", ["22997000000", "22997000003", "22997004321"])
async def test_a_plan_refund_emits_no_event(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker, number: str
) -> None:
    _, reference = await cancelled_plan(client, runtime, clock, worker, number)
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()
    assert (await plan_refund(runtime, reference))["status"] != "pending"
    # The instalment's own events only.
    types = await scalar(runtime, "SELECT array_agg(DISTINCT type) FROM events")
    assert list(types) == ["payment.succeeded"]
    await assert_plan_reconciles(runtime, reference)


def _migration() -> ModuleType:
    spec = importlib.util.spec_from_file_location("migration_0011", MIGRATION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _start_the_old_way(runtime: Runtime, reference: str) -> None:
    """What the refund job did before plan refunds were rows: the penalty taken, the refund
    fixed on the plan and sent, the escrow untouched until the operator confirms, and its
    delayed outcome queued by plan id."""
    now = runtime.clock.now()
    async with unit_of_work(runtime.sessionmaker) as session:
        plan = await session.get(InstallmentPlan, uuid.UUID(reference))
        assert plan is not None
        plan.penalty_amount, plan.refund_amount, plan.updated_at = 300, 2_700, now
        await movements.penalty_taken(
            session, escrow=settlement.escrow(plan), amount=300, reference=reference, at=now
        )
        await queue.enqueue(
            session,
            jobs.REFUND_STATUS.name,
            {"plan_id": reference},
            livemode=False,
            now=now,
            delay=SETTLE_DELAY,
        )


async def _migrate_in_flight(runtime: Runtime) -> None:
    """The data steps of migration 0011 (the table exists already: the tests' schema is at
    head)."""
    migration = _migration()
    async with unit_of_work(runtime.sessionmaker) as session:
        for statement in (
            migration._CARRY_IN_FLIGHT,
            migration._REKEY_JOBS,
            migration._DROP_IDLE_JOBS,
            migration._REKEY_OPERATIONS,
        ):
            await session.execute(text(statement))


@pytest.mark.parametrize(
    ("number", "outcome", "plan_status", "left_in_escrow", "kinds"),
    [
        ("22997004321", "succeeded", "refunded", 0, ["plan_refund"]),
        ("22997000003", "failed", "failed", 2_700, []),
    ],
)
async def test_a_refund_in_flight_before_the_change_takes_the_escrow_only_at_success(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    number: str,
    outcome: str,
    plan_status: str,
    left_in_escrow: int,
    kinds: list[str],
) -> None:
    merchant, reference = await penalised_plan(client, runtime)
    await paid_instalment(client, merchant, reference, number, 3_000)
    assert (await cancel(client, merchant, reference)).status_code == 200
    await _start_the_old_way(runtime, reference)
    await _migrate_in_flight(runtime)
    refund = await plan_refund(runtime, reference)
    assert (refund["status"], refund["amount"], refund["debited"]) == ("pending", 2_700, False)
    assert refund["phone_number"] == number
    payload = await scalar(
        runtime, "SELECT payload FROM jobs WHERE kind = :k", k=jobs.REFUND_STATUS.name
    )
    assert payload == {"reference": refund["reference"]}
    assert await escrow(runtime, merchant.id, reference) == 2_700  # not debited yet
    clock.advance(SETTLE_DELAY + 1)
    await worker.drain()  # the rekeyed status job; the old start job finds the refund begun
    refund = await plan_refund(runtime, reference)
    assert (refund["status"], refund["debited"]) == (outcome, outcome == "succeeded")
    assert await ledger_kinds(runtime, refund["reference"]) == kinds
    assert (await fetch(client, merchant, reference))["status"] == plan_status
    assert await escrow(runtime, merchant.id, reference) == left_in_escrow
    await assert_plan_reconciles(runtime, reference)


async def test_a_live_plan_refund_through_the_network_is_re_credited_when_it_fails_later(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    """Through an operator's network (the call protocol): the row is debited before the
    request leaves, its operation is keyed by the row, and a failure known by a status query
    puts the money back in escrow once."""
    network = ScriptedNetwork()
    runtime.operators.live_adapters["mtn"] = network
    merchant = await make_merchant(runtime)
    live = merchant.headers(livemode=True)
    plan = await create_plan(client, merchant, livemode=True, target_amount=10_000)
    reference = plan["reference"]
    network.send[NETWORK_NUMBER] = SUCCEEDED
    paid = await client.post(
        f"{PLANS}/{reference}/payments",
        json=momo_body(amount=3_000, phone_number=NETWORK_NUMBER),
        headers=live,
    )
    assert paid.json()["data"]["status"] == "succeeded", paid.text
    network.send[NETWORK_NUMBER] = UNKNOWN
    network.statuses[NETWORK_NUMBER] = [FAILED]
    assert (await client.post(f"{PLANS}/{reference}/cancel", json={}, headers=live)).is_success
    await worker.drain()
    refund = await plan_refund(runtime, reference)
    assert (refund["status"], refund["debited"], refund["livemode"]) == ("pending", True, True)
    assert len(network.sends("disburse")) == 1
    assert (await operation_of(runtime, refund["reference"]))["subject"] == "plan_refund"
    assert await live_escrow(runtime, merchant.id, reference) == 0
    await poll_after(runtime, worker, 30)
    await poll_after(runtime, worker, 120)
    refund = await plan_refund(runtime, reference)
    assert (refund["status"], refund["debited"]) == ("failed", False)
    assert await ledger_kinds(runtime, refund["reference"]) == [
        "plan_refund",
        "plan_refund_reversal",
    ]
    fetched = await client.get(f"{PLANS}/{reference}", headers=live)
    assert fetched.json()["data"]["status"] == "failed"
    assert await live_escrow(runtime, merchant.id, reference) == 3_000
    assert len(network.sends("disburse")) == 1
    await assert_plan_reconciles(runtime, reference)
