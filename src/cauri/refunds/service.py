"""Refunds (DESIGN: Refunds): a succeeded Mobile Money payment is refunded, in one refund
or in several partial ones, from the merchant's balance, paid back by the operator to the
number that paid.

The merchant gives back at most `amount`, what the customer paid for; the platform keeps
its fee. What remains refundable is `amount` less the refunds pending or succeeded: a
failed refund re-credits the balance and gives its amount back to refund again. The
payment's lock serializes the refunds of one payment, so their sum never exceeds it. The
payment carries `amount_refunded` (its succeeded refunds) and becomes `refunded` when that
reaches `amount`.

An instalment that succeeded after its plan's cancellation began is refunded here too, in
full, from the plan's escrow (`refund_late_instalment`, DESIGN: Plans); should that refund
fail, its money stays in the escrow and the plan is failed for support.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from sqlalchemy import ColumnElement, Select, func, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls import service as calls
from cauri.calls.requests import Action
from cauri.disbursements import lifecycle
from cauri.events import service as events
from cauri.kit.errors import CauriError, Conflict, InvalidRequest, RefundFailed
from cauri.kit.ids import parse_uuid, prefixed
from cauri.kit.money import format_major, to_minor
from cauri.kit.pagination import Page
from cauri.kit.period import Period
from cauri.ledger import movements
from cauri.ledger.movements import Holder, Movement
from cauri.merchants.caller import Caller
from cauri.models import Payment, Refund, lookups
from cauri.operators import catalogue
from cauri.operators.protocol import Disbursement, OperatorResult, Outcome, RefundSupport
from cauri.payments.schemas import payment_object
from cauri.payments.service import payments
from cauri.plans import settlement as plan_settlement
from cauri.refunds import jobs
from cauri.refunds.schemas import RefundCreate, refund_object
from cauri.runtime import Runtime


def _source(refund: Refund) -> Holder:
    """Whose money goes back: the merchant's balance, or a late instalment's plan escrow."""
    if refund.plan_id is not None:
        return movements.escrow_of(
            refund.merchant_id, str(refund.plan_id), refund.livemode, refund.currency
        )
    return movements.balance_of(refund.merchant_id, refund.livemode, refund.currency)


def _request(refund: Refund) -> Disbursement:
    """Paid back as a refund of the payment's own collection, where the operator has one."""
    return replace(lifecycle.disbursement(refund), refund_of=str(refund.payment_id))


_FLOW = lifecycle.Flow(
    model=Refund,
    movement=Movement.REFUNDED,
    action=Action.REFUND,
    check_job=jobs.CHECK_STATUS,
    source=_source,
    failure=RefundFailed,
    unavailable="Le service de remboursement de cet opérateur est indisponible ; rien n'a été "
    "débité.",
    request=_request,
    describe=refund_object,
)


# Why a payment that is not `succeeded` has nothing to refund.
_NOT_REFUNDABLE = {
    Outcome.PENDING.value: "Ce paiement est encore en attente ; seul un paiement réussi est "
    "remboursable.",
    Outcome.FAILED.value: "Ce paiement a échoué : il n'y a rien à rembourser.",
    "refunded": "Ce paiement est déjà remboursé en entier.",
}


def _check_refundable(payment: Payment) -> str:
    """The number to pay back, or why this payment cannot be refunded here."""
    mode = catalogue.find(payment.operator)
    if mode is None or mode.is_card or payment.phone_number is None:
        raise InvalidRequest(
            "Seul un paiement Mobile Money est remboursable ; un paiement par carte ne l'est pas."
        )
    if payment.plan_id is not None:
        raise Conflict("Une échéance de plan n'est remboursée que par l'annulation de son plan.")
    if payment.status != Outcome.SUCCEEDED:
        raise Conflict(_NOT_REFUNDABLE[payment.status])
    return payment.phone_number


async def _refundable(session: AsyncSession, payment: Payment) -> int:
    """What remains refundable of a locked payment: its amount less its refunds pending or
    succeeded (a failed one gives its amount back)."""
    taken = await session.scalar(
        select(func.coalesce(func.sum(Refund.amount), 0)).where(
            Refund.payment_id == payment.id, Refund.status != Outcome.FAILED.value
        )
    )
    # A whole refund gives back the commission the customer paid too: more than `amount`.
    return max(0, payment.amount - int(taken or 0))


async def _support(session: AsyncSession, runtime: Runtime, payment: Payment) -> RefundSupport:
    """What the operator that would carry this payment's refund can give back; with nothing
    to carry it, as if it took any amount (the refund is then refused, and recorded, by the
    lifecycle)."""
    routed = await runtime.operators.route(
        session, payment.operator, Action.REFUND, payment.livemode
    )
    return RefundSupport.PARTIAL if routed is None else routed.adapter.refunds


def _requested(body: RefundCreate, payment: Payment, remaining: int, support: RefundSupport) -> int:
    """The amount to refund: the body's, within what remains, or all that remains. Through
    an operator that refunds only whole, all the customer paid (the commission too, when
    they paid it), once: what that operator gives back is what the ledger takes out."""
    if support is RefundSupport.NONE:
        raise RefundFailed(
            "Le prestataire de cet opérateur ne rembourse pas les paiements ; rien n'a été débité."
        )
    if remaining < payment.amount and support is RefundSupport.WHOLE:
        raise Conflict(
            "Ce paiement a déjà un remboursement réussi ou en cours, et son opérateur ne "
            "rembourse qu'une fois, en entier."
        )
    if remaining <= 0:
        raise Conflict(
            "Ce paiement n'a plus rien à rembourser : ses remboursements réussis ou en cours "
            "en couvrent tout le montant."
        )
    if support is RefundSupport.WHOLE:
        whole = payment.total_amount
        if body.amount is not None and to_minor(body.amount, payment.currency) not in (
            payment.amount,
            whole,
        ):
            raise InvalidRequest.field(
                "amount",
                "L'opérateur de ce paiement ne rembourse qu'en entier : "
                f"{format_major(whole, payment.currency)}, tout ce que le client a payé ; "
                "un remboursement partiel est impossible.",
            )
        return whole
    if body.amount is None:
        return remaining
    amount = to_minor(body.amount, payment.currency)
    if amount > remaining:
        raise InvalidRequest.field(
            "amount",
            f"Le montant dépasse ce qui reste remboursable sur ce paiement : "
            f"{format_major(remaining, payment.currency)}.",
        )
    return amount


async def _insert(
    session: AsyncSession,
    runtime: Runtime,
    payment: Payment,
    amount: int,
    number: str,
    reason: str | None,
    external_id: str | None = None,
) -> Refund | None:
    """A pending refund of `amount` of a locked payment; None when `external_id` is taken
    (by a refund of another payment, committed meanwhile). An instalment's refund is paid
    from its plan's escrow."""
    now = runtime.clock.now()
    values: dict[str, Any] = {
        "reference": prefixed("re"),
        "external_id": external_id,
        "payment_id": payment.id,
        "plan_id": payment.plan_id,
        "merchant_id": payment.merchant_id,
        "livemode": payment.livemode,
        "status": Outcome.PENDING.value,
        "amount": amount,
        "currency": payment.currency,
        "reason": reason,
        "operator": payment.operator,
        "phone_number": number,
        "created_at": now,
        "updated_at": now,
    }
    statement = lookups.unless_replayed(insert(Refund).values(values), Refund.__table__)
    return (await session.scalars(statement.returning(Refund))).one_or_none()


@dataclass(frozen=True)
class RefundFilters:
    """The filters of a refund list (DESIGN: Refunds)."""

    payment: str | None = None  # the payment's reference or external_id
    status: str | None = None
    period: Period = field(default_factory=Period)


_MISSING = "Remboursement introuvable."


class RefundService:
    async def create(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        payment_reference: str,
        body: RefundCreate,
    ) -> tuple[Refund, bool]:
        """The refund, and whether it was made now (False: a replay of its `external_id`)."""
        found = await payments.get(session, caller, payment_reference)
        # The payment's lock serializes the refunds of one payment: what remains refundable
        # is read and taken under it, and a replay finds the refund made before it.
        payment = await payments.lock(session, found.id)
        assert payment is not None  # read just above; payments are never deleted
        if body.external_id is not None:
            first = await self._named(session, caller, body.external_id)
            if first is not None:
                return _replay(first, payment), False
        number = _check_refundable(payment)
        support = await _support(session, runtime, payment)
        amount = _requested(body, payment, await _refundable(session, payment), support)
        refund = await _insert(
            session, runtime, payment, amount, number, body.reason, body.external_id
        )
        if refund is None:
            first = await self._named(session, caller, body.external_id or "")
            assert first is not None  # the index refused it for this very one
            return _replay(first, payment), False
        await self._send(session, runtime, refund, payment)
        return refund, True

    async def _named(
        self, session: AsyncSession, caller: Caller, external_id: str
    ) -> Refund | None:
        return (
            await session.scalars(
                select(Refund).where(
                    Refund.merchant_id == caller.merchant_id,
                    Refund.livemode == caller.livemode,
                    Refund.external_id == external_id,
                )
            )
        ).one_or_none()

    async def refund_late_instalment(
        self, session: AsyncSession, runtime: Runtime, payment_id: uuid.UUID
    ) -> None:
        """The job of an instalment that succeeded after its plan's cancellation began: its
        whole amount back to the number that paid it, from the plan's escrow. A refusal is
        recorded (a failed refund, the plan failed for support), not raised: a job has no one
        to answer. Locks the payment, then the plan, then (by the debit) the escrow."""
        payment = await payments.lock(session, payment_id)
        if payment is None or payment.plan_id is None or payment.status != Outcome.SUCCEEDED:
            return
        assert payment.phone_number is not None  # the settlement enqueues Mobile Money only
        await plan_settlement.lock(session, payment.plan_id)
        remaining = await _refundable(session, payment)
        if remaining == 0:
            return  # a run of this job already started it
        reason = f"Versement reçu après l'annulation du plan {payment.plan_id}"
        refund = await _insert(session, runtime, payment, remaining, payment.phone_number, reason)
        assert refund is not None  # no external_id: nothing to conflict on
        try:
            await self._send(session, runtime, refund, payment)
        except CauriError as refusal:
            if not refusal.keeps_writes:
                raise

    async def _send(
        self, session: AsyncSession, runtime: Runtime, refund: Refund, payment: Payment
    ) -> None:
        finish = partial(self._finish, session, runtime, refund, payment)
        await _FLOW.initiate(session, runtime, refund, finish)

    async def _finish(
        self,
        session: AsyncSession,
        runtime: Runtime,
        refund: Refund,
        payment: Payment,
        outcome: Outcome,
        reason: str | None,
    ) -> None:
        """Success adds to what the payment has refunded, and refunds it once that is all of
        it; a failure re-credits what was debited, if it was."""
        now = runtime.clock.now()
        fully_refunded = False
        if outcome is Outcome.SUCCEEDED:
            # What the customer got back may exceed `amount` by the commission (a whole
            # refund); `amount_refunded` counts within `amount`.
            payment.amount_refunded = min(payment.amount, payment.amount_refunded + refund.amount)
            payment.updated_at = now
            fully_refunded = payment.amount_refunded == payment.amount
            if fully_refunded:
                payment.status = "refunded"
        elif refund.plan_id is not None:
            await plan_settlement.late_refund_failed(session, refund.plan_id)
        # A payment's callback_url takes priority for everything about that payment.
        await _FLOW.finish(
            session, runtime, refund, outcome, reason, callback_url=payment.callback_url
        )
        if fully_refunded:
            await events.emit(
                session,
                merchant_id=payment.merchant_id,
                livemode=payment.livemode,
                type="payment.refunded",
                data=payment_object(payment, for_event=True),
                at=now,
                callback_url=payment.callback_url,
            )

    async def get(self, session: AsyncSession, caller: Caller, reference: str) -> Refund:
        return await lookups.one_of_yours(
            session, caller, Refund, Refund.reference == reference, missing=_MISSING
        )

    async def list(
        self, session: AsyncSession, caller: Caller, page: Page, filters: RefundFilters
    ) -> tuple[Sequence[Refund], int]:
        kept: list[ColumnElement[bool]] = []
        if filters.payment is not None:
            kept.append(Refund.payment_id.in_(_payments_named(caller, filters.payment)))
        if filters.status is not None:
            kept.append(Refund.status == filters.status)
        kept.extend(filters.period.conditions(Refund.created_at))
        return await lookups.newest_of_yours(session, caller, Refund, Refund.reference, page, *kept)

    async def check_status(self, session: AsyncSession, runtime: Runtime, reference: str) -> None:
        """Asks the operator again about a pending refund (a delayed outcome). Locks the
        payment, then the refund: the order refund creation takes them in."""
        locked = await self._lock(session, reference)
        if locked is None:
            return
        refund, payment = locked
        await _FLOW.recheck(
            session, runtime, refund, partial(self._finish, session, runtime, refund, payment)
        )

    async def _lock(self, session: AsyncSession, reference: str) -> tuple[Refund, Payment] | None:
        """A pending refund and its payment, locked in the order refund creation takes them
        (the payment, then the refund); None if the refund no longer waits."""
        payment_id = await session.scalar(
            select(Refund.payment_id).where(Refund.reference == reference)
        )
        if payment_id is None:
            return None
        payment = await payments.lock(session, payment_id)
        refund = await _FLOW.lock(session, reference)
        if payment is None or refund is None or refund.status != Outcome.PENDING:
            return None
        return refund, payment


refunds = RefundService()


def _replay(first: Refund, payment: Payment) -> Refund:
    """The answer to a refund retried under its `external_id`: the refund made then, if it
    refunds the same payment."""
    if first.payment_id != payment.id:
        raise Conflict(
            "Cet external_id désigne déjà le remboursement d'un autre paiement ; choisissez-en "
            "un autre."
        )
    return first


def _payments_named(caller: Caller, reference: str) -> Select[uuid.UUID]:
    """The caller's payments whose reference or external_id is `reference` (none: an empty
    list, as for any filter that matches nothing)."""
    key = parse_uuid(reference)
    named = Payment.external_id == reference
    return select(Payment.id).where(
        Payment.merchant_id == caller.merchant_id,
        Payment.livemode == caller.livemode,
        named if key is None else or_(Payment.id == key, named),
    )


async def _apply_answer(
    session: AsyncSession, runtime: Runtime, reference: str, result: OperatorResult
) -> None:
    """An operator's answer about a refund, applied if it still waits."""
    locked = await refunds._lock(session, reference)
    if locked is not None:
        refund, payment = locked
        finish = partial(refunds._finish, session, runtime, refund, payment)
        await _FLOW.apply(session, runtime, refund, result, finish)


# Wired by the composition root (cauri.wiring): the call protocol imports no domain.
SUBJECT = calls.SubjectKind("refund", _apply_answer, _FLOW.waiting)
