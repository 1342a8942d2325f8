"""The staff's search of payments, installment plans, payouts and refunds across merchants
and environments: by reference, external_id, merchant, the last digits of the customer's
(or beneficiary's) number, status, mode and creation period. Newest first, in pages, like
the API's lists (`kit.pagination`); the filters combine.

The last digits are found through an index of each number reversed (migration 0018): "ends
with 1234" is the range "4321" <= reverse(number) < "4322" of that index, whatever the
number of rows."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, get_args

from sqlalchemy import ColumnElement, CompoundSelect, and_, false, func, or_, select, union
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from cauri.kit.errors import InvalidRequest
from cauri.kit.ids import parse_uuid
from cauri.kit.pagination import Page, paginate
from cauri.kit.period import Period
from cauri.merchants.service import merchants as merchant_service
from cauri.models import InstallmentPlan, Payment, Payout, PlanRefund, Refund
from cauri.models.payouts import PAYOUT_STATUSES
from cauri.models.plans import PlanStatus
from cauri.payments.endpoints import Status as PaymentStatus
from cauri.refunds.endpoints import Status as RefundStatus

# Fewer digits would match a good share of all numbers: no help to find one.
_DIGITS = re.compile(r"[0-9]{4,15}")

Searched = TypeVar("Searched", Payment, InstallmentPlan, Payout, Refund)


@dataclass(frozen=True)
class SearchFilter:
    reference: str | None = None  # the public reference (a payment's `CAU…` identifier too)
    external_id: str | None = None  # a refund's: its payment's
    merchant_id: str | None = None
    phone_digits: str | None = None  # the last digits of the number (4 to 15)
    status: str | None = None
    livemode: bool | None = None
    period: Period = field(default_factory=Period)


def _ends_with(number: InstrumentedAttribute[Any], digits: str) -> ColumnElement[bool]:
    """The expression of the index of migration 0018, as a range."""
    key = func.reverse(number).collate("C")
    low = digits[::-1]
    high = low[:-1] + chr(ord(low[-1]) + 1)
    return and_(number.is_not(None), key >= low, key < high)


def _digits(wanted: SearchFilter) -> str | None:
    if wanted.phone_digits is None:
        return None
    digits = wanted.phone_digits.strip().lstrip("+")
    if not _DIGITS.fullmatch(digits):
        raise InvalidRequest.field("phone_digits", "Donnez de 4 à 15 chiffres, la fin du numéro.")
    return digits


def _status(wanted: SearchFilter, known: Sequence[str]) -> str | None:
    if wanted.status is not None and wanted.status not in known:
        raise InvalidRequest.field("status", f"Statut inconnu : {wanted.status}.")
    return wanted.status


def _by_uuid(column: InstrumentedAttribute[uuid.UUID], reference: str) -> ColumnElement[bool]:
    key = parse_uuid(reference)
    return false() if key is None else column == key


async def _search(
    session: AsyncSession,
    wanted: SearchFilter,
    page: Page,
    model: type[Searched],
    statuses: Sequence[str],
    *,
    reference: Callable[[str], ColumnElement[bool]],
    external_id: Callable[[str], ColumnElement[bool]],
    number: Callable[[str], ColumnElement[bool]],
    tie: InstrumentedAttribute[Any],
) -> tuple[Sequence[Searched], int]:
    """The filters every kind has alike; what its reference, external_id and number are
    matched against is the kind's, as is the key (`tie`) ordering rows created at once."""
    conditions = wanted.period.conditions(model.created_at)
    if wanted.merchant_id is not None:
        await merchant_service.get(session, wanted.merchant_id)
        conditions.append(model.merchant_id == wanted.merchant_id)
    status = _status(wanted, statuses)
    if status is not None:
        conditions.append(model.status == status)
    if wanted.livemode is not None:
        conditions.append(model.livemode == wanted.livemode)
    if wanted.reference is not None:
        conditions.append(reference(wanted.reference.strip()))
    if wanted.external_id is not None:
        conditions.append(external_id(wanted.external_id))
    digits = _digits(wanted)
    if digits is not None:
        conditions.append(number(digits))
    return await paginate(session, model, conditions, (model.created_at.desc(), tie.desc()), page)


async def payments(
    session: AsyncSession, wanted: SearchFilter, page: Page
) -> tuple[Sequence[Payment], int]:
    """Instalments of plans included, as in `GET /payments`."""
    return await _search(
        session,
        wanted,
        page,
        Payment,
        get_args(PaymentStatus),
        reference=lambda reference: or_(
            _by_uuid(Payment.id, reference), Payment.identifier == reference.upper()
        ),
        external_id=lambda external_id: Payment.external_id == external_id,
        number=lambda digits: _ends_with(Payment.phone_number, digits),
        tie=Payment.id,
    )


def _plan_numbered(digits: str) -> ColumnElement[bool]:
    numbered: CompoundSelect[tuple[uuid.UUID | None]] = union(
        select(Payment.plan_id).where(
            Payment.plan_id.is_not(None), _ends_with(Payment.phone_number, digits)
        ),
        select(PlanRefund.plan_id).where(_ends_with(PlanRefund.phone_number, digits)),
    )
    return InstallmentPlan.id.in_(numbered)


async def plans(
    session: AsyncSession, wanted: SearchFilter, page: Page
) -> tuple[Sequence[InstallmentPlan], int]:
    """A plan's number is any of its instalments' and of its cancellation refunds'."""
    return await _search(
        session,
        wanted,
        page,
        InstallmentPlan,
        [s.value for s in PlanStatus],
        reference=lambda reference: _by_uuid(InstallmentPlan.id, reference),
        external_id=lambda external_id: InstallmentPlan.external_id == external_id,
        number=_plan_numbered,
        tie=InstallmentPlan.id,
    )


async def payouts(
    session: AsyncSession, wanted: SearchFilter, page: Page
) -> tuple[Sequence[Payout], int]:
    return await _search(
        session,
        wanted,
        page,
        Payout,
        PAYOUT_STATUSES,
        reference=lambda reference: Payout.reference == reference,
        external_id=lambda external_id: Payout.external_id == external_id,
        number=lambda digits: _ends_with(Payout.phone_number, digits),
        tie=Payout.reference,
    )


async def refunds(
    session: AsyncSession, wanted: SearchFilter, page: Page
) -> tuple[Sequence[Refund], int]:
    """A refund has no external_id of its own: its payment's is searched."""
    return await _search(
        session,
        wanted,
        page,
        Refund,
        get_args(RefundStatus),
        reference=lambda reference: Refund.reference == reference,
        external_id=lambda external_id: Refund.payment_id.in_(
            select(Payment.id).where(Payment.external_id == external_id)
        ),
        number=lambda digits: _ends_with(Refund.phone_number, digits),
        tie=Refund.reference,
    )
