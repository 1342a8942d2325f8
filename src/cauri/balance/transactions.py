"""What moved a merchant's available balance, one line per ledger transaction that touched
it, read from the ledger so that the lines add up to it: the lines of the dashboard's monthly
statements (issue 26) and of the balance transactions of the finance issue (28).

A line's `type` is its ledger transaction's kind (`payment`, `plan_release`, `topup`,
`payout`, `payout_reversal`, `refund`, `refund_reversal`, …); `net` is what the balance
received (negative: what it gave); `fee` is the platform's commission taken from the merchant
in that transaction (its `fees` posting, except on a payment whose customer paid the fee on
top, which took nothing from the merchant); `amount` = `net` + `fee`, so that `net` =
`amount` − `fee` as in Stripe's balance transactions; `source` is the reference of the
payment, plan, payout or refund (a top-up's: its reason). Months are in UTC.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, Select, and_, case, cast, exists, func, select
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from cauri.kit.errors import InvalidRequest
from cauri.kit.money import Currency
from cauri.kit.months import Month
from cauri.kit.pagination import Page
from cauri.kit.period import Period
from cauri.ledger import accounts, periods
from cauri.ledger import service as ledger_service
from cauri.ledger.accounts import Account
from cauri.ledger.movements import Movement
from cauri.models import LedgerPosting, LedgerTransaction, Payment


@dataclass(frozen=True)
class Line:
    type: str
    source: str | None
    amount: int
    fee: int
    net: int
    currency: str
    created_at: datetime


@dataclass(frozen=True)
class Total:
    """A type's lines of a statement, added up."""

    type: str
    count: int
    amount: int
    fee: int
    net: int


@dataclass(frozen=True)
class Statement:
    """A month of the balance in one currency: `closing` = `opening` + every line's net."""

    currency: str
    month: Month
    opening: int
    totals: list[Total]

    @property
    def fees(self) -> int:
        return sum(total.fee for total in self.totals)

    @property
    def closing(self) -> int:
        return self.opening + sum(total.net for total in self.totals)


# type, source, net, fee, currency, created_at
_Rows = Select[tuple[str, str | None, int, int, str, datetime]]


def _lines(merchant_id: str, livemode: bool, currencies: Sequence[str]) -> _Rows:
    """Every line of the balance in `currencies`, as `_Rows`."""
    own = [accounts.merchant_available(merchant_id, livemode, c).code for c in currencies]
    fees = [accounts.platform("fees", livemode, c).code for c in currencies]
    commission = aliased(LedgerPosting)
    posted_fee = (
        select(func.coalesce(func.sum(commission.amount), 0))
        .where(commission.transaction_id == LedgerTransaction.id, commission.account.in_(fees))
        .scalar_subquery()
    )
    customer_paid_it = exists().where(
        Payment.id == cast(LedgerTransaction.reference, UUID(as_uuid=True)),
        Payment.fee_bearer == "customer",
    )
    fee = case(
        (and_(LedgerTransaction.kind == Movement.COLLECTED.value, customer_paid_it), 0),
        else_=posted_fee,
    )
    return (
        select(
            LedgerTransaction.kind.label("type"),
            LedgerTransaction.reference.label("source"),
            LedgerPosting.amount.label("net"),
            fee.label("fee"),
            LedgerPosting.currency,
            LedgerTransaction.created_at,
        )
        .join(LedgerTransaction, LedgerTransaction.id == LedgerPosting.transaction_id)
        .where(LedgerPosting.account.in_(own))
    )


def _line(row: Row[Any]) -> Line:
    net, fee = int(row.net), int(row.fee)
    return Line(row.type, row.source, net + fee, fee, net, row.currency, row.created_at)


@dataclass(frozen=True)
class _Span:
    """The ids of the ledger's transactions of a month (every merchant's): the first and the
    last. A transaction takes its id and its time within one database transaction, which
    lasts seconds, never `STRAGGLING`: a transaction of the month has an id in the span, one
    before it an id below the span's end, one after it an id above the span's start."""

    first: int
    last: int


STRAGGLING = timedelta(hours=1)
_T = LedgerTransaction


async def _span(session: AsyncSession, month: Month) -> _Span | None:
    """Read off the index by time near each end of the month (not over the whole month)."""
    in_month = (_T.created_at >= month.start, _T.created_at < month.end)
    earliest = select(func.min(_T.created_at)).where(*in_month).scalar_subquery()
    latest = select(func.max(_T.created_at)).where(*in_month).scalar_subquery()
    first = select(func.min(_T.id)).where(*in_month, _T.created_at < earliest + STRAGGLING)
    last = select(func.max(_T.id)).where(*in_month, _T.created_at > latest - STRAGGLING)
    found = (await session.execute(select(first.scalar_subquery(), last.scalar_subquery()))).one()
    return None if found[0] is None else _Span(found[0], found[1])


def _within(statement: _Rows, month: Month, span: _Span) -> _Rows:
    return statement.where(
        LedgerPosting.transaction_id.between(span.first, span.last),
        LedgerTransaction.created_at >= month.start,
        LedgerTransaction.created_at < month.end,
    )


async def _opening(session: AsyncSession, own: Account, month: Month, span: _Span | None) -> int:
    """What the account held when the month began: its postings below the month's span,
    and those of the span dated before the month (transactions being written as it began).
    A month without any transaction: every posting dated before it."""
    posted = select(func.coalesce(func.sum(LedgerPosting.amount), 0)).where(
        LedgerPosting.account == own.code
    )
    if span is None:
        before = posted.join(LedgerTransaction).where(LedgerTransaction.created_at < month.start)
        return int(await session.scalar(before) or 0) + await periods.carried(session, own.code)
    early = posted.join(LedgerTransaction).where(
        LedgerPosting.transaction_id.between(span.first, span.last),
        LedgerTransaction.created_at < month.start,
    )
    below = await ledger_service.posted_below(session, own, span.first)
    return below + int(await session.scalar(early) or 0)


async def _not_archived(session: AsyncSession, month: Month) -> None:
    """A month whose postings left the database (`cauri archive`) has no statement here:
    its lines are in the archive's dumps."""
    archived = await periods.archived_through(session)
    if archived is not None and month <= archived:
        raise InvalidRequest.field(
            "month", f"{month} est archivé : son relevé n'est plus tenu ici."
        )


async def statement(
    session: AsyncSession, merchant_id: str, livemode: bool, currency: str, month: Month
) -> Statement:
    """The month's opening balance and its lines added up by type."""
    await _not_archived(session, month)
    own = accounts.merchant_available(merchant_id, livemode, currency)
    span = await _span(session, month)
    opening = await _opening(session, own, month, span)
    if span is None:
        return Statement(currency, month, opening, [])
    lines = _within(_lines(merchant_id, livemode, [currency]), month, span).subquery()
    grouped = (
        select(lines.c.type, func.count(), func.sum(lines.c.net), func.sum(lines.c.fee))
        .group_by(lines.c.type)
        .order_by(lines.c.type)
    )
    totals = [
        Total(kind, count, int(net) + int(fee), int(fee), int(net))
        for kind, count, net, fee in await session.execute(grouped)
    ]
    return Statement(currency, month, opening, totals)


async def stream(
    session: AsyncSession,
    merchant_id: str,
    livemode: bool,
    currency: str,
    month: Month,
    most: int | None = None,
) -> AsyncIterator[Line]:
    """The month's lines in the order the ledger wrote them (the first `most`), read as they
    are sent."""
    await _not_archived(session, month)
    span = await _span(session, month)
    if span is None:
        return
    ordered = _within(_lines(merchant_id, livemode, [currency]), month, span).order_by(
        LedgerPosting.transaction_id
    )
    result = await session.stream(ordered.limit(most).execution_options(yield_per=1000))
    async for row in result:
        yield _line(row)


async def listed(
    session: AsyncSession,
    merchant_id: str,
    livemode: bool,
    page: Page,
    *,
    period: Period,
    kind: str | None = None,
    currency: str | None = None,
) -> tuple[list[Line], int]:
    """A page of the balance's lines, newest first, and how many match in all (the API's
    `GET /balance/transactions`). The lines of archived months are no longer here: a period
    that starts in one is refused rather than answered short."""
    archived = await periods.archived_through(session)
    if archived is not None and period.start is not None and period.start < archived.end:
        raise InvalidRequest.field(
            "from",
            f"Jusqu'à {archived} inclus, les lignes sont archivées : from ≥ {archived.next()}.",
        )
    currencies = [currency] if currency is not None else [c.value for c in Currency]
    kept = period.conditions(LedgerTransaction.created_at)
    if kind is not None:
        kept.append(LedgerTransaction.kind == kind)
    lines = _lines(merchant_id, livemode, currencies).where(*kept)
    total = await session.scalar(select(func.count()).select_from(lines.subquery()))
    newest = lines.order_by(LedgerPosting.transaction_id.desc())
    rows = await session.execute(newest.offset(page.offset).limit(page.per_page))
    return [_line(row) for row in rows], int(total or 0)
