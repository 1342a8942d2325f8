"""One payment, plan, payout or refund as the staff see it: the resource and the resources
around it, with its trail: the ledger transactions that moved its money (with their
postings), its operator operations (with their exchanges), and the events it emitted (each
with its webhook delivery and that delivery's attempts). Read-only.

What ties them to the resource is its reference: ledger transactions carry it (a payment's
or plan's id, a payout's or refund's reference), operations name it as their subject, and
events hold it as `data.reference`. An event is looked for among its merchant's events of
that environment since the resource was created (their list's index), not in all events."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from cauri.connectors import history
from cauri.connectors.history import OperationView
from cauri.kit.errors import NotFound
from cauri.kit.ids import parse_uuid
from cauri.ledger.movements import Movement
from cauri.models import (
    Event,
    InstallmentPlan,
    LedgerPosting,
    LedgerTransaction,
    Payment,
    Payout,
    PlanRefund,
    Refund,
    WebhookAttempt,
    WebhookDelivery,
)
from cauri.staff.payment_overview import find_payment, refunds_of

Found = TypeVar("Found", InstallmentPlan, Payout, Refund)
PlanPart = TypeVar("PlanPart", Payment, PlanRefund, Refund)


@dataclass(frozen=True)
class Booked:
    transaction: LedgerTransaction
    postings: Sequence[LedgerPosting]  # in the order written


@dataclass(frozen=True)
class Delivered:
    delivery: WebhookDelivery
    attempts: Sequence[WebhookAttempt]  # by number


@dataclass(frozen=True)
class Notified:
    event: Event
    delivery: Delivered | None  # None: the event had nowhere to go


@dataclass(frozen=True)
class Trail:
    ledger: Sequence[Booked]  # oldest first
    operations: Sequence[OperationView]  # oldest first, per reference
    events: Sequence[Notified]  # oldest first


@dataclass(frozen=True)
class PaymentDetail:
    payment: Payment
    refunds: Sequence[Refund]  # oldest first
    trail: Trail  # the payment's and its refunds'


@dataclass(frozen=True)
class PlanDetail:
    plan: InstallmentPlan
    instalments: Sequence[Payment]  # oldest first
    plan_refunds: Sequence[PlanRefund]  # its cancellation's refunds, oldest first
    refunds: Sequence[Refund]  # late instalments' refunds, from its escrow, oldest first
    trail: Trail  # the plan's and all of the above's


@dataclass(frozen=True)
class PayoutDetail:
    payout: Payout
    trail: Trail


@dataclass(frozen=True)
class RefundDetail:
    refund: Refund
    payment: Payment
    trail: Trail


async def _ledger(session: AsyncSession, references: Sequence[str]) -> list[Booked]:
    # A top-up's reference is the free text of its reason: never one of these resources'.
    transactions = (
        await session.scalars(
            select(LedgerTransaction)
            .where(
                LedgerTransaction.reference.in_(references),
                LedgerTransaction.kind != Movement.TOPPED_UP.value,
            )
            .order_by(LedgerTransaction.id)
        )
    ).all()
    postings: dict[int, list[LedgerPosting]] = defaultdict(list)
    for posting in await session.scalars(
        select(LedgerPosting)
        .where(LedgerPosting.transaction_id.in_([t.id for t in transactions]))
        .order_by(LedgerPosting.id)
    ):
        postings[posting.transaction_id].append(posting)
    return [Booked(t, postings[t.id]) for t in transactions]


async def _events(
    session: AsyncSession,
    merchant_id: str,
    livemode: bool,
    since: datetime,
    references: Sequence[str],
) -> list[Notified]:
    events = (
        await session.scalars(
            select(Event)
            .where(
                Event.merchant_id == merchant_id,
                Event.livemode == livemode,
                Event.created_at >= since,
                Event.data["reference"].astext.in_(references),
            )
            .order_by(Event.created_at, Event.id)
        )
    ).all()
    ids = [event.id for event in events]
    deliveries = {
        delivery.event_id: delivery
        for delivery in await session.scalars(
            select(WebhookDelivery).where(WebhookDelivery.event_id.in_(ids))
        )
    }
    attempts: dict[uuid.UUID, list[WebhookAttempt]] = defaultdict(list)
    for attempt in await session.scalars(
        select(WebhookAttempt)
        .where(WebhookAttempt.delivery_id.in_([d.id for d in deliveries.values()]))
        .order_by(WebhookAttempt.number)
    ):
        attempts[attempt.delivery_id].append(attempt)
    return [
        Notified(
            event,
            None
            if (delivery := deliveries.get(event.id)) is None
            else Delivered(delivery, attempts[delivery.id]),
        )
        for event in events
    ]


async def _trail(
    session: AsyncSession,
    found: Payment | InstallmentPlan | Payout | Refund,
    references: Sequence[str],
    also_booked: Sequence[str] = (),
) -> Trail:
    """`also_booked`: references whose ledger transactions belong here, their operations
    being already among those of `references`."""
    operations = [
        view for reference in references for view in await history.exchanges(session, reference)
    ]
    return Trail(
        ledger=await _ledger(session, [*references, *also_booked]),
        operations=operations,
        events=await _events(
            session, found.merchant_id, found.livemode, found.created_at, references
        ),
    )


async def _found(session: AsyncSession, model: type[Found], key: object, missing: str) -> Found:
    """The row of `model` under `key` (None: a reference that cannot be one)."""
    found = None if key is None else await session.get(model, key)
    if found is None:
        raise NotFound(missing)
    return found


async def _of_plan(
    session: AsyncSession,
    model: type[PlanPart],
    plan_id: uuid.UUID,
    tie: InstrumentedAttribute[Any],
) -> Sequence[PlanPart]:
    """Oldest first."""
    statement = select(model).where(model.plan_id == plan_id).order_by(model.created_at, tie)
    return (await session.scalars(statement)).all()


async def payment(session: AsyncSession, reference: str) -> PaymentDetail:
    """By its reference or its `CAU…` identifier."""
    found = await find_payment(session, reference)
    refunds = await refunds_of(session, found)
    trail = await _trail(session, found, [str(found.id), *(refund.reference for refund in refunds)])
    return PaymentDetail(found, refunds, trail)


async def plan(session: AsyncSession, reference: str) -> PlanDetail:
    found = await _found(
        session,
        InstallmentPlan,
        parse_uuid(reference.strip()),
        f"Plan de paiement introuvable : {reference}.",
    )
    instalments = await _of_plan(session, Payment, found.id, Payment.id)
    plan_refunds = await _of_plan(session, PlanRefund, found.id, PlanRefund.reference)
    refunds = await _of_plan(session, Refund, found.id, Refund.reference)
    # The plan's own operations are its cancellation refunds' (`history.exchanges`).
    trail = await _trail(
        session,
        found,
        [
            str(found.id),
            *(str(instalment.id) for instalment in instalments),
            *(refund.reference for refund in refunds),
        ],
        also_booked=[plan_refund.reference for plan_refund in plan_refunds],
    )
    return PlanDetail(found, instalments, plan_refunds, refunds, trail)


async def payout(session: AsyncSession, reference: str) -> PayoutDetail:
    found = await _found(
        session, Payout, reference.strip(), f"Transfert introuvable : {reference}."
    )
    return PayoutDetail(found, await _trail(session, found, [found.reference]))


async def refund(session: AsyncSession, reference: str) -> RefundDetail:
    found = await _found(
        session, Refund, reference.strip(), f"Remboursement introuvable : {reference}."
    )
    paid = await session.get(Payment, found.payment_id)
    assert paid is not None  # the foreign key guarantees it
    return RefundDetail(found, paid, await _trail(session, found, [found.reference]))
