"""A plan's money: instalments into escrow, completion, and the refund of a cancellation.

Everything here runs with the plan's row locked (`SELECT … FOR UPDATE`), in the transaction
of the state change, so `paid_amount`, the escrow account and the plan's status never
disagree, however many instalments settle at once.

Ledger, per plan (DESIGN invariant 2):
- an instalment succeeds: operator clearing −total → escrow +counted part, platform
  `plan_fees` +creation fee part, platform `fees` +commission;
- the plan completes: escrow −paid → merchant available +paid, one transfer;
- the refund of a cancellation starts: escrow −penalty → platform `penalties`;
- the refund is paid out: escrow −refund → operator clearing. While it is pending, and if it
  fails, the refund stays in escrow: support pays it by hand from there.

Instalments still pending when a cancellation is asked delay its refund: the refund starts
once the last of them has settled, so a late success is counted, then refunded with the rest.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.money import percent_of
from cauri.ledger import accounts
from cauri.ledger.accounts import Account
from cauri.ledger.service import Entry, transfer
from cauri.models import InstallmentPlan, Payment
from cauri.models.plans import PlanStatus
from cauri.operators import catalogue
from cauri.operators.protocol import Disbursement, OperatorResult, Outcome
from cauri.runtime import Runtime
from cauri.worker import queue

REFUND_JOB = "plans.refund"
REFUND_STATUS_JOB = "plans.refund_status"


async def lock(session: AsyncSession, plan_id: uuid.UUID) -> InstallmentPlan | None:
    # populate_existing: the session may hold the plan as read before waiting for the lock.
    statement = (
        select(InstallmentPlan)
        .where(InstallmentPlan.id == plan_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    return (await session.scalars(statement)).one_or_none()


def escrow(plan: InstallmentPlan) -> Account:
    return accounts.plan_escrow(plan.merchant_id, str(plan.id), plan.livemode, plan.currency)


async def instalment_settled(
    session: AsyncSession, runtime: Runtime, payment: Payment, outcome: Outcome
) -> None:
    """An instalment reached its final state: book its money, count it, maybe complete the
    plan; on a cancelling plan, the refund may now start."""
    assert payment.plan_id is not None
    plan = await lock(session, payment.plan_id)
    assert plan is not None  # the foreign key guarantees it
    now = runtime.clock.now()
    if outcome is Outcome.SUCCEEDED:
        await _book_instalment(session, plan, payment, now)
        plan.paid_amount += payment.amount - payment.plan_fee_amount
        plan.creation_fee_paid = plan.creation_fee_paid or payment.plan_fee_amount > 0
        plan.updated_at = now
        if plan.cancelled_at is None and _fully_paid(plan):
            await _release(session, plan, now)
            plan.status = PlanStatus.SUCCEEDED
            plan.completed_at = now
    if plan.cancelled_at is not None:
        await queue.enqueue(
            session, REFUND_JOB, {"plan_id": str(plan.id)}, livemode=plan.livemode, now=now
        )
    await session.flush()


def _fully_paid(plan: InstallmentPlan) -> bool:
    # The creation fee is due too: should the instalment carrying it fail after the others
    # reached the target, the plan waits for a fee-only instalment before completing.
    fee_settled = plan.creation_fee_paid or plan.creation_fee_amount == 0
    return plan.paid_amount == plan.target_amount and fee_settled


async def _book_instalment(
    session: AsyncSession, plan: InstallmentPlan, payment: Payment, now: datetime
) -> None:
    live, currency = payment.livemode, payment.currency
    counted = payment.amount - payment.plan_fee_amount
    credits = [
        Entry(escrow(plan), counted),
        Entry(accounts.platform("plan_fees", live, currency), payment.plan_fee_amount),
        Entry(accounts.platform("fees", live, currency), payment.fee_amount),
    ]
    entries = [
        Entry(
            accounts.operator_clearing(payment.operator, live, currency),
            -(payment.amount + payment.fee_amount),
        ),
        *(entry for entry in credits if entry.amount),
    ]
    await transfer(session, kind="payment", reference=str(payment.id), entries=entries, at=now)


async def _release(session: AsyncSession, plan: InstallmentPlan, now: datetime) -> None:
    """The whole escrow to the merchant's balance, in one transfer."""
    available = accounts.merchant_available(plan.merchant_id, plan.livemode, plan.currency)
    await transfer(
        session,
        kind="plan_release",
        reference=str(plan.id),
        entries=[Entry(escrow(plan), -plan.paid_amount), Entry(available, plan.paid_amount)],
        at=now,
    )


async def start_refund(session: AsyncSession, runtime: Runtime, plan_id: uuid.UUID) -> None:
    """The refund job: starts the refund of a cancelling plan once no instalment of it is
    pending (the last one to settle enqueues this job again). Idempotent."""
    plan = await lock(session, plan_id)
    if plan is None or not _cancelling(plan) or plan.refund_amount is not None:
        return
    if not await _has_pending_instalment(session, plan.id):
        await _start_refund(session, runtime, plan)


async def check_refund(session: AsyncSession, runtime: Runtime, plan_id: uuid.UUID) -> None:
    """The refund status job: asks the operator again about a refund under way."""
    plan = await lock(session, plan_id)
    if plan is None or not _cancelling(plan) or plan.refund_amount is None:
        return
    adapter = runtime.operators.adapter(plan.refund_operator or "", plan.livemode)
    if adapter is not None:
        await _apply(session, runtime, plan, await adapter.disbursement_status(_refund(plan)))


def _cancelling(plan: InstallmentPlan) -> bool:
    return plan.status == PlanStatus.PENDING and plan.cancelled_at is not None


async def _has_pending_instalment(session: AsyncSession, plan_id: uuid.UUID) -> bool:
    pending = exists().where(Payment.plan_id == plan_id, Payment.status == Outcome.PENDING)
    return bool(await session.scalar(select(pending)))


async def _last_succeeded_instalment(session: AsyncSession, plan_id: uuid.UUID) -> Payment:
    return (
        await session.scalars(
            select(Payment)
            .where(Payment.plan_id == plan_id, Payment.status == Outcome.SUCCEEDED)
            .order_by(Payment.updated_at.desc(), Payment.created_at.desc())
            .limit(1)
        )
    ).one()


async def _start_refund(session: AsyncSession, runtime: Runtime, plan: InstallmentPlan) -> None:
    now = runtime.clock.now()
    plan.updated_at = now
    plan.penalty_amount = percent_of(plan.paid_amount, plan.cancellation_penalty_percent)
    plan.refund_amount = plan.paid_amount - plan.penalty_amount
    if plan.penalty_amount:
        penalties = accounts.platform("penalties", plan.livemode, plan.currency)
        await transfer(
            session,
            kind="plan_penalty",
            reference=str(plan.id),
            entries=[
                Entry(escrow(plan), -plan.penalty_amount),
                Entry(penalties, plan.penalty_amount),
            ],
            at=now,
        )
    if plan.refund_amount == 0:
        plan.status = PlanStatus.REFUNDED
        await session.flush()
        return
    # refund_amount > 0, so something was paid: there is a last succeeded instalment.
    last = await _last_succeeded_instalment(session, plan.id)
    plan.refund_operator = last.operator
    plan.refund_phone_number = last.phone_number
    mode = catalogue.find(last.operator)
    adapter = runtime.operators.adapter(last.operator, plan.livemode)
    if last.phone_number is None or (mode is not None and mode.is_card):
        _fail(plan, "card_instalment")
    elif adapter is None:
        _fail(plan, "no_disbursement_adapter")
    else:
        await _apply(session, runtime, plan, await adapter.disburse(_refund(plan)))
    await session.flush()


def _refund(plan: InstallmentPlan) -> Disbursement:
    assert plan.refund_amount is not None and plan.refund_operator is not None
    assert plan.refund_phone_number is not None
    return Disbursement(
        reference=str(plan.id),
        operator=plan.refund_operator,
        amount=plan.refund_amount,
        currency=plan.currency,
        phone_number=plan.refund_phone_number,
    )


def _fail(plan: InstallmentPlan, reason: str) -> None:
    """The refund cannot be paid automatically: the plan is failed, support takes over; the
    refund stays in escrow."""
    plan.status = PlanStatus.FAILED
    plan.refund_failure_reason = reason


async def _apply(
    session: AsyncSession, runtime: Runtime, plan: InstallmentPlan, result: OperatorResult
) -> None:
    now = runtime.clock.now()
    plan.updated_at = now
    if result.outcome is Outcome.SUCCEEDED:
        refund = _refund(plan)
        clearing = accounts.operator_clearing(refund.operator, plan.livemode, plan.currency)
        await transfer(
            session,
            kind="plan_refund",
            reference=str(plan.id),
            entries=[Entry(escrow(plan), -refund.amount), Entry(clearing, refund.amount)],
            at=now,
        )
        plan.status = PlanStatus.REFUNDED
    elif result.outcome is Outcome.FAILED:
        _fail(plan, result.reason or "disbursement_failed")
    elif result.check_after is not None:
        await queue.enqueue(
            session,
            REFUND_STATUS_JOB,
            {"plan_id": str(plan.id)},
            livemode=plan.livemode,
            now=now,
            delay=result.check_after,
        )
    await session.flush()
