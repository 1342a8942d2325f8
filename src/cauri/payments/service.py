"""Collecting a payment: rules, the operator, settlement through the ledger, events."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, TypeVar, cast

from sqlalchemy import ColumnElement, Table, select, true
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls import availability
from cauri.calls import service as calls
from cauri.calls.availability import Route, State
from cauri.calls.requests import Action
from cauri.events import service as events
from cauri.kit.errors import Conflict, InvalidRequest, NotFound, PaymentFailed, ServerError
from cauri.kit.ids import parse_uuid, short_identifier
from cauri.kit.pagination import Page
from cauri.kit.prepared import Prepared
from cauri.kit.wording import status_word
from cauri.ledger import movements
from cauri.ledger import service as ledger_service
from cauri.merchants.caller import Caller
from cauri.merchants.contract import FeeBearer, payment_terms
from cauri.models import OperatorOperation, Payment, lookups, rows
from cauri.operators import catalogue
from cauri.operators.protocol import OPERATOR_PAGE, Collection, OperatorResult, Outcome
from cauri.payments import jobs, rules
from cauri.payments.schemas import PaymentCreate, PaymentFields, PaymentFilters, payment_object
from cauri.runtime import Runtime
from cauri.webhooks import url_safety
from cauri.worker import queue

CARD_EXPIRED_REASON = "card_payment_expired"


OPERATOR_DOWN = (
    "L'opérateur ne répond plus en ce moment : le paiement n'a pas été tenté. Réessayez plus "
    "tard ou proposez un autre moyen de paiement."
)


def _collection(
    payment: Payment, otp: str | None = None, callback_url: str | None = None
) -> Collection:
    """A payment's id is the reference its collection is sent to the operator under."""
    return Collection(
        reference=str(payment.id),
        operator=payment.operator,
        amount=payment.total_amount,
        currency=payment.currency,
        phone_number=payment.phone_number,
        otp=otp,
        description=payment.description,
        callback_url=callback_url,
        # A card payment comes back through Cauri's page, which sends the customer on to the
        # merchant's return_url with the payment's reference and status.
        return_url=f"{payment.payment_url}/return"
        if payment.phone_number is None and payment.payment_url
        else payment.return_url,
        customer=payment.customer or None,
    )


@dataclass(frozen=True)
class Priced:
    """A payment request that passed every operator rule, with its commission and who
    pays it."""

    checked: rules.CheckedPayment
    fee: int
    fee_bearer: FeeBearer

    @property
    def debited(self) -> int:
        return rules.debited(self.checked.amount, self.fee, self.fee_bearer)


@dataclass(frozen=True)
class Instalment:
    """What makes a payment an instalment: its plan, and the part of its amount that pays the
    plan's creation fee (the rest counts toward the target)."""

    plan_id: uuid.UUID
    creation_fee_part: int


@dataclass(frozen=True)
class Origin:
    """Where a payment was tried from: a checkout session, opened by a payment link or not
    (cauri.checkout)."""

    checkout_session: str
    payment_link: str | None = None


# Built once, executed with the row's values: a statement built per payment with
# `.values(...)` regenerates its cache key on every request. Only the external_id index is an
# arbiter, and a payment without external_id never conflicts on it. A Core INSERT on the
# table, its returned row loaded as the session's Payment: the ORM's bulk-insert path (the
# statement on the mapped class) costs more per payment than the row itself.
_PAYMENTS = cast(Table, Payment.__table__)
_INSERT = select(Payment).from_statement(
    lookups.unless_replayed(insert(_PAYMENTS), _PAYMENTS).returning(*_PAYMENTS.c)
)


# A payment the operator decided before it was recorded (the simulator, `decides_offline`):
# its row, its money and its event in ONE statement and one round trip, each part written
# only when the row is (an `external_id` replay writes nothing). The row's columns are those
# `_values` describes, as on the ORM path (`record`); the ledger's and the events' parts are
# their domains' own (`appended`, `emitted`); the job of the event's first delivery wakes the
# worker with NOTIFY (`queue.woken_by`). It returns the new row's id, or no row (a replay):
# the row is the one built in Python, so nothing is read back. Compiled once per shape of
# row.
@dataclass(frozen=True)
class _Decided:
    statement: Prepared
    money: ledger_service.Appended | None
    event: events.Emitted

    def parameters(
        self,
        row: dict[str, Any],
        event: events.Emission,
        money: ledger_service.NewTransaction | None,
    ) -> dict[str, Any]:
        parameters = row | self.event.values(event)
        if self.money is not None and money is not None:
            parameters |= self.money.values(money)
        return parameters


@cache
def _decided(columns: tuple[str, ...], *, with_money: bool) -> _Decided:
    pay = (
        lookups.unless_replayed(rows.inserted(_PAYMENTS, columns), _PAYMENTS)
        .returning(_PAYMENTS.c.id)
        .cte("pay")
    )
    money = ledger_service.appended(pay) if with_money else None
    event = events.emitted(pay)
    statement = select(pay.c.id).join_from(pay, queue.woken_by(event.job), true())
    if money is not None:
        statement = statement.add_cte(money.postings)
    return _Decided(Prepared(statement), money, event)


def _payment_url(base_url: str | None, payment_id: uuid.UUID) -> str:
    if base_url is None:
        raise ServerError(
            "CAURI_PUBLIC_URL n'est pas défini : sans lui, le service ne sait pas à quelle "
            "adresse publique envoyer le client payer par carte."
        )
    return f"{base_url.rstrip('/')}/pay/{payment_id}"


# What a payment's final state means to the domain it belongs to: an instalment's money (the
# plans domain), an attempt of a checkout session (the checkout domain). Wired by the
# composition root (cauri.wiring) so that payments need know neither.
Settled = Callable[[AsyncSession, Runtime, Payment, Outcome], Awaitable[None]]

Answer = TypeVar("Answer")
# What the caller answers with a payment and whether it was created, built before the write.
Reply = Callable[[Payment, bool], Answer]


_BY_REFERENCE = lookups.ByReference(Payment, Payment.id, "Paiement introuvable.", parse_uuid)


class PaymentService:
    instalment_settled: Settled | None = None
    attempt_settled: Settled | None = None

    async def create(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        body: PaymentCreate,
        base_url: str | None,
        reply: Reply[Answer],
    ) -> Answer:
        """The caller's answer, `reply(payment, created)` (created False: an idempotent
        replay). A payment its operator decided offline is written in one statement past
        the request's transaction, as the route's last step: its answer is built before it,
        so that a crash (a 500, which may be retried: spec) can only come before the write."""
        priced = await self.price(session, runtime, caller, body)
        payment_id = uuid.uuid4()
        answer = await self._ask_offline(runtime, caller, priced, payment_id, body.otp)
        if answer is not None and answer.outcome is not Outcome.PENDING:
            return await self._record_decided(
                session, runtime, caller, body, priced, base_url, payment_id, answer, reply
            )
        created = await self.record(
            session,
            runtime,
            caller,
            body,
            priced,
            base_url,
            description=body.description,
            external_id=body.external_id,
            payment_id=payment_id,
            answer=answer,
        )
        if created is None:
            return await self._replayed(session, caller, body, reply)
        await self.initiate(session, runtime, created, otp=body.otp, answer=answer)
        if created.status == Outcome.FAILED:
            raise PaymentFailed(reference=str(created.id))
        return reply(created, True)

    async def _replayed(
        self, session: AsyncSession, caller: Caller, body: PaymentCreate, reply: Reply[Answer]
    ) -> Answer:
        """The answer to a replay: the payment first made under the same `external_id`."""
        return reply(await self.get(session, caller, body.external_id or ""), False)

    async def _record_decided(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        body: PaymentCreate,
        priced: Priced,
        base_url: str | None,
        payment_id: uuid.UUID,
        answer: OperatorResult,
        reply: Reply[Answer],
    ) -> Answer:
        """`record` then `initiate` of a payment whose operator decided before it was
        recorded, in one statement (see `_decided`): the same row, money and event. Written
        last, after its answer is built (see `create`); nothing is written when
        `external_id` is already taken, and the first payment is the answer."""
        values = self._values(
            runtime,
            caller,
            body,
            priced,
            base_url,
            description=body.description,
            external_id=body.external_id,
            payment_id=payment_id,
            answer=answer,
        )
        # The row as PostgreSQL stores it, defaults included: the answer is built from it.
        decided = rows.build(Payment, values)
        decided.amount_refunded = decided.plan_fee_amount = 0
        succeeded = answer.outcome is Outcome.SUCCEEDED
        event = events.Emission(
            event_id=uuid.uuid4(),
            merchant_id=caller.merchant_id,
            livemode=caller.livemode,
            type=f"payment.{answer.outcome.value}",
            data=payment_object(decided, for_event=True),
            at=decided.updated_at,
            callback_url=decided.callback_url,
        )
        money = (
            movements.collected_with(
                into=movements.balance_of(caller.merchant_id, caller.livemode, decided.currency),
                operator=decided.operator,
                counted=decided.net_amount,
                fee=decided.fee_amount,
                reference=str(payment_id),
                at=decided.updated_at,
            )
            if succeeded
            else None
        )
        answered = reply(decided, True)
        # One statement, atomic on its own: outside a transaction (none has begun on this
        # path) it commits as it runs, with no BEGIN or COMMIT round trip.
        decide = _decided(tuple(values), with_money=succeeded)
        written = await decide.statement.fetchrow(session, decide.parameters(values, event, money))
        if written is None:
            return await self._replayed(session, caller, body, reply)
        if not succeeded:
            # Keeps its writes: the payment is recorded failed.
            raise PaymentFailed(reference=str(decided.id))
        return answered

    async def _ask_offline(
        self,
        runtime: Runtime,
        caller: Caller,
        priced: Priced,
        payment_id: uuid.UUID,
        otp: str | None,
    ) -> OperatorResult | None:
        """The answer of an operator that decides offline (the simulator), asked before the
        payment is recorded so that it is inserted in its final state: one UPDATE fewer on the
        hot path. None for any other operator, engaged only once the payment is recorded."""
        checked = priced.checked
        adapter = runtime.operators.in_process(checked.mode.operator, caller.livemode)
        if adapter is None or not adapter.decides_offline:
            return None
        return await adapter.collect(
            Collection(
                reference=str(payment_id),
                operator=checked.mode.operator,
                amount=priced.debited,
                currency=checked.currency,
                phone_number=checked.phone_number,
                otp=otp,
            )
        )

    async def price(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        body: PaymentFields,
        *,
        instalment: bool = False,
        own_return_page: bool = False,
    ) -> Priced:
        """Every rule a payment obeys before an operator is engaged, and its commission.
        An instalment's customer always bears the commission: the plan's arithmetic (what
        counts toward the target, what its escrow holds) is the spec's. `own_return_page`:
        `return_url` is Cauri's own page (a checkout session's), under CAURI_PUBLIC_URL,
        which the operator of this service chose; a merchant's is checked. Writes nothing."""
        mode = rules.resolve_mode(body)
        checked = rules.check(body, mode)
        if not own_return_page:
            rules.check_return_url(body.return_url, livemode=caller.livemode)
        if body.callback_url is not None:
            url_safety.require_safe(
                body.callback_url,
                field="callback_url",
                reach=url_safety.Reach.configured(runtime.settings),
            )
        terms = await payment_terms(
            session, caller.merchant_id, caller.livemode, mode, runtime.operators
        )
        bearer = FeeBearer.CUSTOMER if instalment else terms.fee_bearer
        return Priced(checked, rules.fee_within_bounds(checked, terms, bearer), bearer)

    def _values(
        self,
        runtime: Runtime,
        caller: Caller,
        body: PaymentFields,
        priced: Priced,
        base_url: str | None,
        *,
        description: str | None,
        external_id: str | None,
        payment_id: uuid.UUID,
        instalment: Instalment | None = None,
        answer: OperatorResult | None = None,
        origin: Origin | None = None,
        test_page: bool = False,
    ) -> dict[str, Any]:
        """The new payment's row; `test_page`: paid on Cauri's hosted page, as a card is (a
        test payment of a mode whose operator has a page of its own: cauri.checkout)."""
        now = runtime.clock.now()
        mode = priced.checked.mode
        values: dict[str, Any] = {
            "id": payment_id,
            "identifier": short_identifier(),
            "merchant_id": caller.merchant_id,
            "livemode": caller.livemode,
            "external_id": external_id,
            "status": Outcome.PENDING.value,
            "amount": priced.checked.amount,
            "fee_amount": priced.fee,
            "fee_bearer": priced.fee_bearer.value,
            "currency": priced.checked.currency,
            "description": description,
            "payment_mode_id": mode.id,
            "operator": mode.operator,
            "phone_number": priced.checked.phone_number,
            "customer": body.customer.model_dump(),
            "return_url": body.return_url,
            "callback_url": body.callback_url,
            "metadata": body.metadata,
            "payment_url": _payment_url(base_url, payment_id)
            if mode.is_card or test_page
            else None,
            "failure_reason": None,
            "operator_reference": None,
            "created_at": now,
            "updated_at": now,
        }
        if instalment is not None:
            values |= {
                "plan_id": instalment.plan_id,
                "plan_fee_amount": instalment.creation_fee_part,
            }
        if origin is not None:
            values |= {
                "checkout_session": origin.checkout_session,
                "payment_link": origin.payment_link,
            }
        if answer is not None:
            values |= {
                "status": answer.outcome.value,
                "failure_reason": answer.reason,
                "operator_reference": answer.operator_reference,
            }
        return values

    async def record(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        body: PaymentFields,
        priced: Priced,
        base_url: str | None,
        *,
        description: str | None,
        external_id: str | None = None,
        instalment: Instalment | None = None,
        payment_id: uuid.UUID | None = None,
        answer: OperatorResult | None = None,
        origin: Origin | None = None,
        test_page: bool = False,
    ) -> Payment | None:
        """Inserts the payment, pending, or as `answer` (the operator's, asked first) leaves
        it; None when `external_id` is already taken (a replay). The caller then engages the
        operator, or applies `answer`, with `initiate`."""
        values = self._values(
            runtime,
            caller,
            body,
            priced,
            base_url,
            description=description,
            external_id=external_id,
            instalment=instalment,
            payment_id=payment_id or uuid.uuid4(),
            answer=answer,
            origin=origin,
            test_page=test_page,
        )
        return (await session.scalars(_INSERT, values)).one_or_none()

    async def initiate(
        self,
        session: AsyncSession,
        runtime: Runtime,
        payment: Payment,
        otp: str | None,
        answer: OperatorResult | None = None,
    ) -> None:
        """Engages the operator, unless `answer` is its answer already recorded with the
        payment, and applies it; a refusal at initiation is recorded, then raised (402)."""
        if answer is None:
            routed = await runtime.operators.route(
                session, payment.operator, Action.COLLECT, payment.livemode
            )
            assert routed is not None  # payment_terms refused modes without a route
            route = Route(routed.connector, payment.operator, Action.COLLECT.value)
            if await availability.state(session, runtime, route) is State.CLOSED:
                # Refused at once rather than left waiting on an operator that is down.
                await self.settle(session, runtime, payment, Outcome.FAILED, "operator_unavailable")
                raise PaymentFailed(OPERATOR_DOWN, reference=str(payment.id))
            collection = _collection(
                payment, otp, calls.callback_url(runtime, routed.connector, str(payment.id))
            )
            subject = calls.Subject("payment", str(payment.id))
            await calls.engage(session, runtime, routed, subject, Action.COLLECT, collection)
            # Applied by the call (or by whatever answer got there first): as it stands now.
            await session.refresh(payment)
        else:
            await self.apply(session, runtime, payment, answer, recorded=True)
        if payment.status == Outcome.FAILED:
            raise PaymentFailed(reference=str(payment.id))
        if payment.status == Outcome.PENDING and payment.phone_number is None:
            # A card payment waits for its customer on the page: not forever (no scan of
            # pending payments: one job, due when its time is up).
            await jobs.EXPIRE_CARD.enqueue(
                session,
                jobs.PaymentJob(str(payment.id)),
                livemode=payment.livemode,
                now=payment.created_at,
                delay=runtime.settings.card_payment_ttl,
            )

    async def apply(
        self,
        session: AsyncSession,
        runtime: Runtime,
        payment: Payment,
        result: OperatorResult,
        *,
        recorded: bool = False,
    ) -> None:
        """Applies an operator's answer to a pending payment; `recorded`: the payment was
        inserted with the answer's status already, only its consequences remain."""
        if result.operator_reference is not None and not recorded:
            payment.operator_reference = result.operator_reference
        if result.redirect_url is not None and payment.payment_url is None:
            # The operator's page where the customer approves (Wave's checkout).
            payment.payment_url = result.redirect_url
        if result.outcome is Outcome.PENDING:
            if result.check_after is not None:
                await jobs.CHECK_STATUS.enqueue(
                    session,
                    jobs.PaymentJob(str(payment.id)),
                    livemode=payment.livemode,
                    now=runtime.clock.now(),
                    delay=result.check_after,
                )
            return
        if recorded:
            await self._settled(session, runtime, payment, result.outcome, payment.updated_at)
        else:
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
        await self._settled(session, runtime, payment, outcome, now)

    async def _settled(
        self,
        session: AsyncSession,
        runtime: Runtime,
        payment: Payment,
        outcome: Outcome,
        now: datetime,
    ) -> None:
        """What a payment now in its final state brings: its money, its event."""
        if payment.plan_id is not None:
            # An instalment's money goes to its plan's escrow, and may complete the plan.
            if self.instalment_settled is None:
                raise RuntimeError("no plans domain wired: cauri.wiring.wire() first")
            await self.instalment_settled(session, runtime, payment, outcome)
        elif outcome is Outcome.SUCCEEDED:
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
        if payment.checkout_session is not None:
            if self.attempt_settled is None:
                raise RuntimeError("no checkout domain wired: cauri.wiring.wire() first")
            await self.attempt_settled(session, runtime, payment, outcome)

    async def _book(self, session: AsyncSession, payment: Payment, now: datetime) -> None:
        await movements.collected(
            session,
            into=movements.balance_of(payment.merchant_id, payment.livemode, payment.currency),
            operator=payment.operator,
            counted=payment.net_amount,
            fee=payment.fee_amount,
            reference=str(payment.id),
            at=now,
        )

    async def get(self, session: AsyncSession, caller: Caller, reference: str) -> Payment:
        """By reference or by the merchant's external_id, within the caller's environment."""
        return await _BY_REFERENCE.get(session, caller, reference)

    async def list(
        self, session: AsyncSession, caller: Caller, page: Page, filters: PaymentFilters
    ) -> tuple[Sequence[Payment], int]:
        conditions = filters.period.conditions(Payment.created_at)
        if filters.status is not None:
            conditions.append(Payment.status == filters.status)
        if filters.operator is not None:
            mode = catalogue.find(filters.operator)
            if mode is None:
                raise InvalidRequest.field("operator", f"Opérateur inconnu : {filters.operator}.")
            conditions.append(Payment.operator == mode.operator)
        if filters.external_id is not None:
            conditions.append(Payment.external_id == filters.external_id)
        return await lookups.newest_of_yours(
            session, caller, Payment, Payment.id, page, *conditions
        )

    async def oldest_first(
        self, session: AsyncSession, grouped: ColumnElement[bool]
    ) -> Sequence[Payment]:
        """The payments of one group (a plan's instalments, a checkout session's attempts), in
        the order they were made."""
        found = await session.scalars(
            select(Payment).where(grouped).order_by(Payment.created_at, Payment.id)
        )
        return found.all()

    async def lock(self, session: AsyncSession, payment_id: uuid.UUID) -> Payment | None:
        return await lookups.locked(session, Payment, Payment.id == payment_id)

    async def check_status(
        self, session: AsyncSession, runtime: Runtime, payment_id: uuid.UUID
    ) -> None:
        """Asks the operator again about a pending payment (a delayed outcome)."""
        payment = await self.lock(session, payment_id)
        if payment is None or payment.status != Outcome.PENDING:
            return
        adapter = runtime.operators.in_process(payment.operator, payment.livemode)
        if adapter is None:
            return
        await self.apply(
            session, runtime, payment, await adapter.collection_status(_collection(payment))
        )

    async def operator_page(self, session: AsyncSession, payment: Payment) -> str | None:
        """Where the operator that collects a live card payment takes the card (CinetPay's
        page), as it said when the payment was sent; None until it said."""
        stored = await session.scalar(
            select(OperatorOperation.request).where(
                OperatorOperation.subject == "payment",
                OperatorOperation.subject_ref == str(payment.id),
                OperatorOperation.action == Action.COLLECT.value,
            )
        )
        page = ((stored or {}).get("operator_data") or {}).get(OPERATOR_PAGE)
        return page if isinstance(page, str) else None

    async def expire_card(
        self, session: AsyncSession, runtime: Runtime, payment_id: uuid.UUID
    ) -> None:
        """A card payment still pending CAURI_CARD_PAYMENT_TTL after its creation is failed,
        unless its operator, asked one last time, has an outcome for it."""
        payment = await self.lock(session, payment_id)
        if payment is None or payment.status != Outcome.PENDING:
            return
        adapter = runtime.operators.in_process(payment.operator, payment.livemode)
        if adapter is not None:
            result = await adapter.collection_status(_collection(payment))
            if result.outcome is not Outcome.PENDING:
                await self.apply(session, runtime, payment, result)
                return
        elif payment.livemode:
            # Sent through an operator's network: the customer may still pay on its page;
            # only the operator's answer (the call protocol's status queries) may fail it.
            return
        await self.settle(session, runtime, payment, Outcome.FAILED, CARD_EXPIRED_REASON)

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
            raise Conflict(f"Le paiement est déjà {status_word(payment.status)}.")
        await self.settle(session, runtime, payment, outcome, reason)
        return payment


payments = PaymentService()


async def _apply_answer(
    session: AsyncSession, runtime: Runtime, reference: str, result: OperatorResult
) -> None:
    """An operator's answer about a payment's collection, applied if it still waits."""
    payment = await payments.lock(session, uuid.UUID(reference))
    if payment is not None and payment.status == Outcome.PENDING:
        await payments.apply(session, runtime, payment, result)


async def _waiting(session: AsyncSession, reference: str) -> bool:
    """Whether a payment still waits for its collection's answer."""
    status = await session.scalar(select(Payment.status).where(Payment.id == uuid.UUID(reference)))
    return status == Outcome.PENDING


# Wired by the composition root (cauri.wiring): the call protocol imports no domain.
SUBJECT = calls.SubjectKind("payment", _apply_answer, _waiting)
