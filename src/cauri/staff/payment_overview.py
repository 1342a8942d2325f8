"""A payment as the staff read it, whichever merchant's: with its refunds and what was
exchanged with the operator (`cauri payments show`, the console). Apart from the other reads
so that the command imports no more than it shows. Read-only: nothing here writes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.connectors import history
from cauri.connectors.history import OperationView
from cauri.kit.errors import NotFound
from cauri.kit.ids import parse_uuid
from cauri.models import Payment, Refund


@dataclass(frozen=True)
class PaymentOverview:
    payment: Payment
    refunds: Sequence[Refund]  # oldest first
    operations: Sequence[OperationView]  # the payment's, then each refund's, oldest first


async def find_payment(session: AsyncSession, reference: str) -> Payment:
    """By its reference or its identifier (`CAU…`), whichever merchant it belongs to: an
    external_id is only unique within a merchant's environment, so it is not enough here."""
    reference = reference.strip()
    key = parse_uuid(reference)
    match = Payment.identifier == reference
    payment = await session.scalar(
        select(Payment).where(match if key is None else or_(Payment.id == key, match))
    )
    if payment is None:
        raise NotFound(f"Paiement introuvable : {reference}.")
    return payment


async def refunds_of(session: AsyncSession, payment: Payment) -> Sequence[Refund]:
    """Oldest first."""
    rows = await session.scalars(
        select(Refund)
        .where(Refund.payment_id == payment.id)
        .order_by(Refund.created_at, Refund.reference)
    )
    return rows.all()


async def payment_overview(session: AsyncSession, reference: str) -> PaymentOverview:
    payment = await find_payment(session, reference)
    refunds = await refunds_of(session, payment)
    operations = [
        view
        for subject in (str(payment.id), *(refund.reference for refund in refunds))
        for view in await history.exchanges(session, subject)
    ]
    return PaymentOverview(payment, refunds, operations)
