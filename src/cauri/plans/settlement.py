"""A plan's money: instalments into escrow, completion, and the refunds of a cancellation.

Everything here runs with the plan's row locked (`SELECT … FOR UPDATE`), in the transaction
of the state change, so `paid_amount`, the escrow account and the plan's status never
disagree, however many instalments settle at once.

Ledger, per plan (DESIGN invariant 2):
- an instalment succeeds: operator clearing −total → escrow +counted part, platform
  `plan_fees` +creation fee part, platform `fees` +commission;
- the plan completes: escrow −paid → merchant available +paid, one transfer;
- the refund of a cancellation starts: escrow −penalty → platform `penalties`;
- the refund is sent (a `PlanRefund` row through cauri.disbursements.lifecycle, like a
  payout): escrow −refund → operator clearing; should the operator fail it, the reversal
  puts it back in escrow, where support pays it by hand. Locks: the plan, then its refund
  row, then the escrow account.

Cancellation and expiry never wait on an instalment still pending (DESIGN, Plans): from
`cancelled_at` on, `paid_amount` no longer moves, and the refund of it (minus the penalty)
starts at once. An instalment that succeeds after that is late: it counts for nothing, its
whole amount goes to the escrow (the commission to the platform, as for any payment), and a
job has the refunds domain pay it back in full to its own payer, from the escrow. A late
card instalment cannot be paid back by an operator, nor can a late refund the operator
refuses: that money stays in escrow and the plan is `failed`, for support.

A plan can never complete after its `expires_at`: whichever request or job finds it past
that instant, still actively pending, begins its expiry there (the expiry job may lag).
"""

from __future__ import annotations

import contextlib
import uuid
from datetime import datetime
from functools import partial

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls import service as calls
from cauri.calls.requests import Action
from cauri.disbursements import lifecycle
from cauri.kit.errors import RefundFailed
from cauri.kit.ids import prefixed
from cauri.kit.money import percent_of
from cauri.ledger import movements
from cauri.ledger.movements import Holder, Movement
from cauri.models import InstallmentPlan, Payment, PlanRefund, lookups
from cauri.models.plans import PlanResolution, PlanStatus
from cauri.operators import catalogue
from cauri.operators.protocol import OperatorResult, Outcome
from cauri.plans import jobs
from cauri.runtime import Runtime

EXPIRED_REASON = "expired"
# Why a plan is failed for support (refund_failure_reason), besides an operator's own reason.
CARD_INSTALMENT = "card_instalment"
LATE_CARD_INSTALMENT = "late_card_instalment"
LATE_REFUND_FAILED = "late_instalment_refund_failed"


async def lock(session: AsyncSession, plan_id: uuid.UUID) -> InstallmentPlan | None:
    return await lookups.locked(session, InstallmentPlan, InstallmentPlan.id == plan_id)


def escrow(plan: InstallmentPlan) -> Holder:
    return movements.escrow_of(plan.merchant_id, str(plan.id), plan.livemode, plan.currency)


def _refund_source(refund: PlanRefund) -> Holder:
    return movements.escrow_of(
        refund.merchant_id, str(refund.plan_id), refund.livemode, refund.currency
    )


# The refund of a cancellation: from the plan's escrow, no fee, and no event (the spec has
# none about a plan's cancellation; the plan itself shows it).
_FLOW = lifecycle.Flow(
    model=PlanRefund,
    movement=Movement.PLAN_REFUNDED,
    action=Action.DISBURSE,
    check_job=jobs.REFUND_STATUS,
    source=_refund_source,
    failure=RefundFailed,
    unavailable="Le service de transfert de cet opérateur est indisponible ; rien n'a été débité.",
    refused_when_closed=False,
)


def actively_pending(plan: InstallmentPlan) -> bool:
    """Pending with no cancellation or expiry begun: the plan takes instalments."""
    return plan.status == PlanStatus.PENDING and plan.cancelled_at is None


def takes_instalments(plan: InstallmentPlan, now: datetime) -> bool:
    return actively_pending(plan) and now < plan.expires_at


def refundable_by_operator(payment: Payment) -> bool:
    """Only a Mobile Money payment is paid back automatically (spec): a card is not."""
    mode = catalogue.find(payment.operator)
    return payment.phone_number is not None and not (mode is not None and mode.is_card)


async def begin_cancellation(
    session: AsyncSession,
    runtime: Runtime,
    plan: InstallmentPlan,
    reason: str | None,
    at: datetime,
) -> None:
    """The plan stays pending, now cancelling: instalments are refused from here on, and the
    refund job (same transaction) starts the refund of what has settled. Its destination is
    fixed now, while every succeeded instalment is one that counts: the last of them."""
    plan.cancelled_at = at
    plan.cancellation_reason = reason
    plan.updated_at = runtime.clock.now()
    last = await _last_succeeded_instalment(session, plan.id)
    if last is not None:
        plan.refund_operator = last.operator
        plan.refund_phone_number = last.phone_number if refundable_by_operator(last) else None
    await session.flush()
    await jobs.REFUND.enqueue(
        session,
        jobs.PlanJob(str(plan.id)),
        livemode=plan.livemode,
        now=runtime.clock.now(),
    )


async def begin_expiry(session: AsyncSession, runtime: Runtime, plan: InstallmentPlan) -> None:
    """An expired plan was cancelled at its expires_at, however late this runs."""
    await begin_cancellation(session, runtime, plan, EXPIRED_REASON, plan.expires_at)


async def expire_if_due(session: AsyncSession, runtime: Runtime, plan: InstallmentPlan) -> bool:
    """Begins the expiry of a locked plan past its expires_at and still actively pending;
    whether it did."""
    if not actively_pending(plan) or runtime.clock.now() < plan.expires_at:
        return False
    await begin_expiry(session, runtime, plan)
    return True


async def accepts_instalment(session: AsyncSession, runtime: Runtime, plan_id: uuid.UUID) -> bool:
    """Locks the plan: whether it takes an instalment now (past expires_at, its expiry
    begins here)."""
    plan = await lock(session, plan_id)
    assert plan is not None  # an instalment's plan: the foreign key guarantees it
    await expire_if_due(session, runtime, plan)
    return actively_pending(plan)


async def instalment_settled(
    session: AsyncSession, runtime: Runtime, payment: Payment, outcome: Outcome
) -> None:
    """An instalment reached its final state: book its money, count it, maybe complete the
    plan; once the cancellation has begun, a success is late (refunded in full)."""
    assert payment.plan_id is not None
    plan = await lock(session, payment.plan_id)
    assert plan is not None  # the foreign key guarantees it
    # This instalment's new status is not flushed yet (no autoflush): an expiry begun here
    # sends its refund to the last instalment that counts, never to this late one.
    await expire_if_due(session, runtime, plan)
    now = runtime.clock.now()
    if outcome is Outcome.SUCCEEDED and plan.cancelled_at is not None:
        await _book_instalment(session, plan, payment, now, late=True)
        if refundable_by_operator(payment):
            await jobs.REFUND_LATE_INSTALMENT.enqueue(
                session,
                jobs.InstalmentJob(str(payment.id)),
                livemode=payment.livemode,
                now=now,
            )
        else:
            hand_to_support(plan, LATE_CARD_INSTALMENT)
        plan.updated_at = now
    elif outcome is Outcome.SUCCEEDED:
        await _book_instalment(session, plan, payment, now, late=False)
        plan.paid_amount += payment.amount - payment.plan_fee_amount
        plan.creation_fee_paid = plan.creation_fee_paid or payment.plan_fee_amount > 0
        plan.updated_at = now
        if _fully_paid(plan):
            await _release(session, plan, now)
            plan.status = PlanStatus.SUCCEEDED
            plan.completed_at = now
    await session.flush()


def hand_to_support(plan: InstallmentPlan, reason: str) -> None:
    """Money of a late instalment that no operator will pay back stays in the escrow: the plan
    is `failed` for support, now if its own refund is over, else when that ends. The reason
    is the first such one, unless the plan's own refund fails (its reason wins)."""
    plan.refund_failure_reason = plan.refund_failure_reason or reason
    if plan.status == PlanStatus.REFUNDED:
        plan.status = PlanStatus.FAILED


async def late_refund_failed(session: AsyncSession, plan_id: uuid.UUID) -> None:
    plan = await lock(session, plan_id)
    assert plan is not None  # a refund's plan: the foreign key guarantees it
    hand_to_support(plan, LATE_REFUND_FAILED)
    await session.flush()


def _fully_paid(plan: InstallmentPlan) -> bool:
    # The creation fee is due too: should the instalment carrying it fail after the others
    # reached the target, the plan waits for a fee-only instalment before completing.
    fee_settled = plan.creation_fee_paid or plan.creation_fee_amount == 0
    return plan.paid_amount == plan.target_amount and fee_settled


async def _book_instalment(
    session: AsyncSession, plan: InstallmentPlan, payment: Payment, now: datetime, *, late: bool
) -> None:
    """A late instalment's creation fee part is refunded with the rest: all of it to escrow."""
    fee_part = 0 if late else payment.plan_fee_amount
    await movements.collected(
        session,
        into=escrow(plan),
        operator=payment.operator,
        counted=payment.amount - fee_part,
        plan_fee=fee_part,
        fee=payment.fee_amount,
        reference=str(payment.id),
        at=now,
    )


async def _release(session: AsyncSession, plan: InstallmentPlan, now: datetime) -> None:
    """The whole escrow to the merchant's balance, in one transfer."""
    await movements.escrow_released(
        session, escrow=escrow(plan), amount=plan.paid_amount, reference=str(plan.id), at=now
    )


async def start_refund(session: AsyncSession, runtime: Runtime, plan_id: uuid.UUID) -> None:
    """The refund job: starts the refund of a cancelling plan, whatever instalments are
    still pending (they are late if they succeed). Idempotent."""
    plan = await lock(session, plan_id)
    if plan is None or not _cancelling(plan) or plan.refund_amount is not None:
        return
    await _start_refund(session, runtime, plan)


def _cancelling(plan: InstallmentPlan) -> bool:
    return plan.status == PlanStatus.PENDING and plan.cancelled_at is not None


async def _last_succeeded_instalment(session: AsyncSession, plan_id: uuid.UUID) -> Payment | None:
    return (
        await session.scalars(
            select(Payment)
            .where(Payment.plan_id == plan_id, Payment.status == Outcome.SUCCEEDED)
            .order_by(Payment.updated_at.desc(), Payment.created_at.desc())
            .limit(1)
        )
    ).one_or_none()


async def _start_refund(session: AsyncSession, runtime: Runtime, plan: InstallmentPlan) -> None:
    now = runtime.clock.now()
    plan.updated_at = now
    plan.penalty_amount = percent_of(plan.paid_amount, plan.cancellation_penalty_percent)
    plan.refund_amount = plan.paid_amount - plan.penalty_amount
    if plan.penalty_amount:
        await movements.penalty_taken(
            session,
            escrow=escrow(plan),
            amount=plan.penalty_amount,
            reference=str(plan.id),
            at=now,
        )
    if plan.refund_amount == 0:
        _refunded(plan)
    elif plan.refund_phone_number is None:
        _fail(plan, CARD_INSTALMENT)
    else:
        refund = await record_refund(session, runtime, plan, plan.refund_amount)
        await send_refund(session, runtime, plan, refund)
    await session.flush()


async def record_refund(
    session: AsyncSession, runtime: Runtime, plan: InstallmentPlan, amount: int
) -> PlanRefund:
    """A pending refund of `amount` from a locked plan's escrow, to where its refund goes
    (fixed by begin_cancellation, or by the staff's resolution)."""
    assert amount > 0 and plan.refund_operator and plan.refund_phone_number
    now = runtime.clock.now()
    refund = PlanRefund(
        reference=prefixed("prf"),
        plan_id=plan.id,
        merchant_id=plan.merchant_id,
        livemode=plan.livemode,
        status=Outcome.PENDING.value,
        amount=amount,
        currency=plan.currency,
        operator=plan.refund_operator,
        phone_number=plan.refund_phone_number,
        reason=None,
        debited=False,
        operator_reference=None,
        failure_reason=None,
        created_at=now,
        updated_at=now,
        completed_at=None,
    )
    session.add(refund)
    await session.flush()
    return refund


async def send_refund(
    session: AsyncSession, runtime: Runtime, plan: InstallmentPlan, refund: PlanRefund
) -> None:
    """Debits the escrow and sends the refund. A refusal (or no operator to send it) is
    recorded, the plan failed with nothing taken, not raised: the refund starts in a job,
    which has no one to answer."""
    with contextlib.suppress(RefundFailed):
        await _FLOW.initiate(
            session, runtime, refund, partial(_finish, session, runtime, plan, refund)
        )


async def _finish(
    session: AsyncSession,
    runtime: Runtime,
    plan: InstallmentPlan,
    refund: PlanRefund,
    outcome: Outcome,
    reason: str | None,
) -> None:
    """The plan follows its refund: refunded on success (failed if a late instalment was
    handed to support meanwhile); on a failure, failed for support with the operator's
    reason, the money back in escrow by the Flow's reversal (if it was taken). A plan
    already failed is being resolved by the staff: its refund's success resolves it."""
    now = runtime.clock.now()
    if outcome is Outcome.SUCCEEDED and not refund.debited:
        # The one exception to "debited when sent": refunds in flight when plan refunds
        # became disbursement rows (migration 0011_plan_refunds) were sent by the old
        # lifecycle, which took the escrow only at confirmation. Their rows carry
        # debited = false; their money is taken now. Every row since is debited when sent.
        await _FLOW.debit(session, refund, now)
    await _FLOW.finish(session, runtime, refund, outcome, reason)
    plan.updated_at = now
    if outcome is Outcome.SUCCEEDED:
        plan.refunded_amount += refund.amount
        if plan.status == PlanStatus.FAILED:
            resolved(plan, PlanResolution.REFUNDED, now)
        else:
            _refunded(plan)
    else:
        _fail(plan, reason or "disbursement_failed")
    await session.flush()


async def check_refund(session: AsyncSession, runtime: Runtime, reference: str) -> None:
    """The refund status job: asks the simulator again about a plan refund under way."""
    locked = await _lock_refund(session, reference)
    if locked is not None:
        plan, refund = locked
        finish = partial(_finish, session, runtime, plan, refund)
        await _FLOW.recheck(session, runtime, refund, finish)


async def _apply_answer(
    session: AsyncSession, runtime: Runtime, reference: str, result: OperatorResult
) -> None:
    """An operator's answer about a plan refund (the call protocol's hook), applied if the
    refund still waits."""
    locked = await _lock_refund(session, reference)
    if locked is not None:
        plan, refund = locked
        finish = partial(_finish, session, runtime, plan, refund)
        await _FLOW.apply(session, runtime, refund, result, finish)


async def _lock_refund(
    session: AsyncSession, reference: str
) -> tuple[InstallmentPlan, PlanRefund] | None:
    """A pending plan refund and its plan, locked in the order every plan refund takes them:
    the plan, then its refund (then, by a debit or a re-credit, the escrow account). None
    if the refund no longer waits."""
    plan_id = await session.scalar(
        select(PlanRefund.plan_id).where(PlanRefund.reference == reference)
    )
    if plan_id is None:
        return None
    plan = await lock(session, plan_id)
    refund = await _FLOW.lock(session, reference)
    if plan is None or refund is None or refund.status != Outcome.PENDING:
        return None
    return plan, refund


def _refunded(plan: InstallmentPlan) -> None:
    """The refund of what had settled is done; a late instalment handed to support while it
    ran leaves the plan failed."""
    plan.status = PlanStatus.FAILED if plan.refund_failure_reason else PlanStatus.REFUNDED


def resolved(plan: InstallmentPlan, how: PlanResolution, at: datetime) -> None:
    """The staff's resolution is done: what was left in escrow reached someone."""
    plan.resolution = how.value
    plan.resolved_at = at
    if how is PlanResolution.REFUNDED:
        plan.status = PlanStatus.REFUNDED


def _fail(plan: InstallmentPlan, reason: str) -> None:
    """The refund cannot be paid automatically: the plan is failed, support takes over; the
    refund stays in escrow."""
    plan.status = PlanStatus.FAILED
    plan.refund_failure_reason = reason


# Wired by the composition root (cauri.wiring), as `instalment_settled` for payments: the
# call protocol imports no domain, and payments import no plan.
REFUND_SUBJECT = calls.SubjectKind(_FLOW.kind, _apply_answer, _FLOW.waiting)
