"""Refunds (DESIGN: Refunds): one full refund of a succeeded Mobile Money payment, taken
from the merchant's balance and paid back by the operator to the number that paid.

The merchant gives back `amount`, what it was credited; the platform keeps its fee. A failed
refund re-credits the balance and leaves the payment succeeded, so it can be refunded again.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.events import service as events
from cauri.kit.errors import Conflict, InvalidRequest, NotFound, RefundFailed
from cauri.kit.ids import prefixed
from cauri.ledger import accounts
from cauri.ledger.service import Entry
from cauri.merchants.auth import Caller
from cauri.models import Payment, Refund
from cauri.operators import catalogue
from cauri.operators.protocol import Outcome
from cauri.payments.schemas import payment_object
from cauri.payments.service import payments
from cauri.payouts import disbursing
from cauri.refunds.schemas import refund_object
from cauri.runtime import Runtime

CHECK_STATUS_JOB = "refunds.check_status"


def _entries(refund: Refund) -> list[Entry]:
    live, currency = refund.livemode, refund.currency
    return [
        Entry(accounts.merchant_available(refund.merchant_id, live, currency), -refund.amount),
        Entry(accounts.operator_clearing(refund.operator, live, currency), refund.amount),
    ]


_FLOW = disbursing.Flow(
    model=Refund,
    kind="refund",
    check_job=CHECK_STATUS_JOB,
    entries=_entries,
    describe=refund_object,
    failure=RefundFailed,
    unavailable="Le service de remboursement de cet opérateur est indisponible ; rien n'a été "
    "débité.",
    refused=None,
)


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
        raise Conflict(f"Seul un paiement réussi est remboursable ; celui-ci est {payment.status}.")
    return payment.phone_number


class RefundService:
    async def create(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        payment_reference: str,
        reason: str | None,
    ) -> Refund:
        found = await payments.get(session, caller, payment_reference)
        # The payment's lock serializes the refunds of one payment.
        payment = await payments.lock(session, found.id)
        assert payment is not None  # read just above; payments are never deleted
        number = _check_refundable(payment)
        now = runtime.clock.now()
        values: dict[str, Any] = {
            "reference": prefixed("re"),
            "payment_id": payment.id,
            "merchant_id": payment.merchant_id,
            "livemode": payment.livemode,
            "status": Outcome.PENDING.value,
            "amount": payment.amount,
            "currency": payment.currency,
            "reason": reason,
            "operator": payment.operator,
            "phone_number": number,
            "created_at": now,
            "updated_at": now,
        }
        statement = (
            insert(Refund)
            .values(values)
            .on_conflict_do_nothing(
                index_elements=[Refund.payment_id], index_where=text("status <> 'failed'")
            )
            .returning(Refund)
        )
        refund = (await session.scalars(statement)).one_or_none()
        if refund is None:
            raise Conflict("Ce paiement a déjà un remboursement en cours ou réussi.")
        unsent = partial(self._finish, session, runtime, refund, payment)
        result = await _FLOW.initiate(session, runtime, refund, unsent)
        await _FLOW.apply(
            session, runtime, refund, result, self._debited(session, runtime, refund, payment)
        )
        return refund

    def _debited(
        self, session: AsyncSession, runtime: Runtime, refund: Refund, payment: Payment
    ) -> disbursing.Finish:
        """Finishes a refund already debited: a failure re-credits the balance."""
        return partial(self._finish, session, runtime, refund, payment, recredit=True)

    async def _finish(
        self,
        session: AsyncSession,
        runtime: Runtime,
        refund: Refund,
        payment: Payment,
        outcome: Outcome,
        reason: str | None,
        *,
        recredit: bool = False,
    ) -> None:
        """Success refunds the payment; a failure after the debit re-credits the balance
        (`recredit`), one at initiation had nothing taken."""
        now = runtime.clock.now()
        if outcome is Outcome.SUCCEEDED:
            payment.status = "refunded"
            payment.updated_at = now
        # A payment's callback_url takes priority for everything about that payment.
        await _FLOW.finish(
            session,
            runtime,
            refund,
            outcome,
            reason,
            debited=recredit,
            callback_url=payment.callback_url,
        )
        if outcome is Outcome.SUCCEEDED:
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
        refund = (
            await session.scalars(
                select(Refund).where(
                    Refund.reference == reference,
                    Refund.merchant_id == caller.merchant_id,
                    Refund.livemode == caller.livemode,
                )
            )
        ).one_or_none()
        if refund is None:
            raise NotFound("Remboursement introuvable.")
        return refund

    async def check_status(self, session: AsyncSession, runtime: Runtime, reference: str) -> None:
        """Asks the operator again about a pending refund (a delayed outcome). Locks the
        payment, then the refund: the order refund creation takes them in."""
        payment_id = await session.scalar(
            select(Refund.payment_id).where(Refund.reference == reference)
        )
        if payment_id is None:
            return
        payment = await payments.lock(session, payment_id)
        refund = await _FLOW.lock(session, reference)
        if payment is None or refund is None or refund.status != Outcome.PENDING:
            return
        await _FLOW.recheck(
            session, runtime, refund, self._debited(session, runtime, refund, payment)
        )


refunds = RefundService()
