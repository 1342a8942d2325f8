"""Collecting a payment: rules, the operator, settlement through the ledger, events."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.events import service as events
from cauri.kit.errors import Conflict, NotFound, PaymentFailed
from cauri.kit.ids import short_identifier
from cauri.kit.pagination import Page
from cauri.ledger import accounts
from cauri.ledger.service import Entry, transfer
from cauri.merchants.auth import Caller
from cauri.merchants.contract import payment_terms
from cauri.models import Payment
from cauri.operators.protocol import Collection, OperatorResult, Outcome
from cauri.payments import rules
from cauri.payments.schemas import PaymentCreate, payment_object
from cauri.runtime import Runtime
from cauri.worker import queue

CHECK_STATUS_JOB = "payments.check_status"


def _as_uuid(reference: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(reference)
    except ValueError:
        return None


def _collection(payment: Payment, otp: str | None = None) -> Collection:
    return Collection(
        reference=str(payment.id),
        operator=payment.operator,
        amount=payment.amount + payment.fee_amount,
        currency=payment.currency,
        phone_number=payment.phone_number,
        otp=otp,
    )


class PaymentService:
    async def create(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        body: PaymentCreate,
        base_url: str,
    ) -> tuple[Payment, bool]:
        """Returns the payment and whether it was created (False: an idempotent replay)."""
        mode = rules.resolve_mode(body)
        checked = rules.check(body, mode)
        terms = await payment_terms(
            session, caller.merchant_id, caller.livemode, mode, runtime.operators
        )
        fee = rules.fee_within_bounds(checked, terms)
        payment_id = uuid.uuid4()
        now = runtime.clock.now()
        values: dict[str, Any] = {
            "id": payment_id,
            "identifier": short_identifier(),
            "merchant_id": caller.merchant_id,
            "livemode": caller.livemode,
            "external_id": body.external_id,
            "status": Outcome.PENDING.value,
            "amount": checked.amount,
            "fee_amount": fee,
            "currency": checked.currency,
            "description": body.description,
            "payment_mode_id": mode.id,
            "operator": mode.operator,
            "phone_number": checked.phone_number,
            "customer": body.customer.model_dump(),
            "return_url": body.return_url,
            "callback_url": body.callback_url,
            "metadata_": body.metadata,
            "payment_url": f"{base_url.rstrip('/')}/pay/{payment_id}" if mode.is_card else None,
            "created_at": now,
            "updated_at": now,
        }
        statement = insert(Payment).values(values)
        if body.external_id is not None:
            statement = statement.on_conflict_do_nothing(
                index_elements=[Payment.merchant_id, Payment.livemode, Payment.external_id],
                index_where=Payment.external_id.is_not(None),
            )
        created = (await session.scalars(statement.returning(Payment))).one_or_none()
        if created is None:
            return await self.get(session, caller, body.external_id or ""), False
        await self.initiate(session, runtime, created, otp=body.otp)
        return created, True

    async def initiate(
        self, session: AsyncSession, runtime: Runtime, payment: Payment, otp: str | None
    ) -> None:
        """Engages the operator; a refusal at initiation is recorded, then raised (402)."""
        adapter = runtime.operators.adapter(payment.operator, payment.livemode)
        assert adapter is not None  # payment_terms refused modes without an adapter
        result = await adapter.collect(_collection(payment, otp))
        await self.apply(session, runtime, payment, result)
        if payment.status == Outcome.FAILED:
            raise PaymentFailed()

    async def apply(
        self, session: AsyncSession, runtime: Runtime, payment: Payment, result: OperatorResult
    ) -> None:
        """Applies an operator's answer to a pending payment."""
        if result.outcome is Outcome.PENDING:
            if result.check_after is not None:
                await queue.enqueue(
                    session,
                    CHECK_STATUS_JOB,
                    {"payment_id": str(payment.id)},
                    now=runtime.clock.now(),
                    delay=result.check_after,
                )
            return
        await self.settle(session, runtime, payment, result.outcome, result.reason)

    async def settle(
        self,
        session: AsyncSession,
        runtime: Runtime,
        payment: Payment,
        outcome: Outcome,
        reason: str | None = None,
    ) -> None:
        """Moves a pending payment to its final state, with its money and its event, in the
        caller's transaction."""
        now = runtime.clock.now()
        payment.status = outcome.value
        payment.failure_reason = reason
        payment.updated_at = now
        if outcome is Outcome.SUCCEEDED:
            await self._book(session, payment, now)
        await session.flush()
        await events.emit(
            session,
            merchant_id=payment.merchant_id,
            livemode=payment.livemode,
            type=f"payment.{outcome.value}",
            data=payment_object(payment, for_event=True),
            at=now,
            callback_url=payment.callback_url,
        )

    async def _book(self, session: AsyncSession, payment: Payment, now: Any) -> None:
        live, currency = payment.livemode, payment.currency
        entries = [
            Entry(
                accounts.operator_clearing(payment.operator, live, currency),
                -(payment.amount + payment.fee_amount),
            ),
            Entry(accounts.merchant_available(payment.merchant_id, live, currency), payment.amount),
        ]
        if payment.fee_amount:
            entries.append(Entry(accounts.platform("fees", live, currency), payment.fee_amount))
        await transfer(session, kind="payment", reference=str(payment.id), entries=entries, at=now)

    async def get(self, session: AsyncSession, caller: Caller, reference: str) -> Payment:
        """By reference or by the merchant's external_id, within the caller's environment."""
        as_uuid = _as_uuid(reference)
        match = Payment.external_id == reference
        if as_uuid is not None:
            match = or_(Payment.id == as_uuid, match)
        payment = (
            await session.scalars(
                select(Payment)
                .where(
                    Payment.merchant_id == caller.merchant_id,
                    Payment.livemode == caller.livemode,
                    match,
                )
                .order_by(Payment.id != as_uuid if as_uuid else Payment.created_at)
                .limit(1)
            )
        ).one_or_none()
        if payment is None:
            raise NotFound("Paiement introuvable.")
        return payment

    async def list(
        self, session: AsyncSession, caller: Caller, page: Page, status: str | None
    ) -> tuple[Sequence[Payment], int]:
        conditions = [
            Payment.merchant_id == caller.merchant_id,
            Payment.livemode == caller.livemode,
        ]
        if status is not None:
            conditions.append(Payment.status == status)
        total = await session.scalar(select(func.count()).select_from(Payment).where(*conditions))
        rows = await session.scalars(
            select(Payment)
            .where(*conditions)
            .order_by(Payment.created_at.desc(), Payment.id.desc())
            .offset(page.offset)
            .limit(page.per_page)
        )
        return rows.all(), int(total or 0)

    async def lock(self, session: AsyncSession, payment_id: uuid.UUID) -> Payment | None:
        return (
            await session.scalars(select(Payment).where(Payment.id == payment_id).with_for_update())
        ).one_or_none()

    async def check_status(
        self, session: AsyncSession, runtime: Runtime, payment_id: uuid.UUID
    ) -> None:
        """Asks the operator again about a pending payment (a delayed outcome)."""
        payment = await self.lock(session, payment_id)
        if payment is None or payment.status != Outcome.PENDING:
            return
        adapter = runtime.operators.adapter(payment.operator, payment.livemode)
        if adapter is None:
            return
        await self.apply(
            session, runtime, payment, await adapter.collection_status(_collection(payment))
        )

    async def force_outcome(
        self,
        session: AsyncSession,
        runtime: Runtime,
        payment_id: uuid.UUID,
        outcome: Outcome,
        reason: str,
    ) -> Payment:
        """A test-mode decision (test helper, hosted page): only a pending test payment."""
        payment = await self.lock(session, payment_id)
        if payment is None or payment.livemode:
            raise NotFound("Paiement introuvable.")
        if payment.status != Outcome.PENDING:
            raise Conflict(f"Le paiement est déjà {payment.status}.")
        await self.settle(session, runtime, payment, outcome, reason)
        return payment


payments = PaymentService()
