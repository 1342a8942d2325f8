"""CSV exports of payments, payouts and refunds for a period (by creation), optionally one
merchant's and one environment's, for a finance team: streamed (an async iterator of lines,
the rows read through a server-side cursor `BATCH` at a time, never the period at once).

Every file starts with the same columns, so that they stack: reference, merchant_id,
merchant_name, mode, created_at, status, amount, fee, net, currency, operator, phone_number,
settled_at, external_id; then each kind's own. Amounts are in the currency's unit, as the API
gives them, written exactly (`12.50` EUR, `5000` XOF). Dates are ISO 8601, UTC.

- `net`: what the resource adds to or takes from the merchant's money: a payment's
  `net_amount` (credited), a payout's `total_debited` (amount and fee), a refund's amount.
- `settled_at`: when that money was booked, from the ledger: a payment's collection into the
  balance (an instalment's: its plan's release from escrow to the balance; none while the
  plan holds it); a payout's or refund's debit while it stands (none if it never left the
  balance, or came back to it when it failed). So the settled rows' `net`, credits less
  debits, is what these resources did to the balance.
- `phone_number` is masked (the last four digits hidden), as the API shows a payout's: a
  file leaves the platform (mail, spreadsheets), finance reconciles by reference and amount,
  and support finds a number's resources by the staff's search instead.
- A text cell starting like a spreadsheet formula (`=`, `+`, `-`, `@`, …) is prefixed with
  `'`: an external_id or a merchant's name must not run in the finance team's spreadsheet.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, SQLColumnExpression, String, case, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from cauri.kit.errors import InvalidRequest
from cauri.kit.money import decimal_text
from cauri.kit.period import Period
from cauri.kit.phone import mask
from cauri.ledger.movements import Movement
from cauri.merchants.service import merchants as merchant_service
from cauri.models import LedgerTransaction, Merchant, Payment, Payout, Refund

BATCH = 500
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")

COLUMNS = (
    "reference",
    "merchant_id",
    "merchant_name",
    "mode",
    "created_at",
    "status",
    "amount",
    "fee",
    "net",
    "currency",
    "operator",
    "phone_number",
    "settled_at",
    "external_id",
)
PAYMENT_COLUMNS = (*COLUMNS, "identifier", "fee_bearer", "total_amount", "amount_refunded")
PAYOUT_COLUMNS = (*COLUMNS, "completed_at")
REFUND_COLUMNS = (*COLUMNS, "payment", "completed_at")

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class ExportFilter:
    period: Period
    merchant_id: str | None = None
    livemode: bool | None = None


def _booked(reference: SQLColumnExpression[str], movement: Movement) -> Any:
    """When the ledger recorded `movement` for that reference."""
    return (
        select(func.max(LedgerTransaction.created_at))
        .where(LedgerTransaction.reference == reference, LedgerTransaction.kind == movement.value)
        .scalar_subquery()
    )


async def _statement(
    session: AsyncSession,
    wanted: ExportFilter,
    model: type[Payment] | type[Payout] | type[Refund],
    settled: Any,
    tie: InstrumentedAttribute[Any],
) -> Select[*tuple[Any, ...]]:
    """Rows of (the resource, its merchant's name, when it settled), oldest first."""
    if wanted.period.start is None:
        raise InvalidRequest.field("from", "Un export couvre une période : donnez son début.")
    if wanted.period.end is None:
        raise InvalidRequest.field("to", "Un export couvre une période : donnez sa fin.")
    conditions = wanted.period.conditions(model.created_at)
    if wanted.merchant_id is not None:
        await merchant_service.get(session, wanted.merchant_id)
        conditions.append(model.merchant_id == wanted.merchant_id)
    if wanted.livemode is not None:
        conditions.append(model.livemode == wanted.livemode)
    return (
        select(model, Merchant.name, settled)
        .join(Merchant, Merchant.id == model.merchant_id)
        .where(*conditions)
        .order_by(model.created_at, tie)
    )


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    text = str(value)
    if _NUMBER.fullmatch(text):  # a debit's amount is negative, not a formula
        return text
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def csv_line(cells: Sequence[Any]) -> str:
    """One line of a CSV file, each cell as text (a formula-like text made inert)."""
    out = io.StringIO()
    csv.writer(out).writerow([_text(cell) for cell in cells])
    return out.getvalue()


async def _stream(
    session: AsyncSession,
    statement: Select[*tuple[Any, ...]],
    columns: Sequence[str],
    cells: Callable[[Any], Sequence[Any]],
) -> AsyncIterator[str]:
    yield csv_line(columns)
    result = await session.stream(statement.execution_options(yield_per=BATCH))
    async for batch in result.partitions():
        for row in batch:
            yield csv_line(cells(row))


def _money(minor: int, currency: str) -> str:
    return decimal_text(minor, currency)


def _cells(
    resource: Payment | Payout | Refund,
    reference: str,
    merchant_name: str,
    *,
    fee: int,
    net: int,
    settled_at: datetime | None,
    external_id: str | None,
) -> tuple[Any, ...]:
    """The columns every kind has (COLUMNS)."""
    currency = resource.currency
    return (
        reference,
        resource.merchant_id,
        merchant_name,
        "live" if resource.livemode else "test",
        resource.created_at,
        resource.status,
        _money(resource.amount, currency),
        _money(fee, currency),
        _money(net, currency),
        currency,
        resource.operator,
        None if resource.phone_number is None else mask(resource.phone_number),
        settled_at,
        external_id,
    )


async def payments(session: AsyncSession, wanted: ExportFilter) -> AsyncIterator[str]:
    """Oldest first; instalments of plans included, as in `GET /payments`."""
    settled = case(
        (Payment.plan_id.is_(None), _booked(cast(Payment.id, String), Movement.COLLECTED)),
        else_=_booked(cast(Payment.plan_id, String), Movement.ESCROW_RELEASED),
    )
    statement = await _statement(session, wanted, Payment, settled, Payment.id)

    def cells(row: Any) -> Sequence[Any]:
        payment, merchant_name, settled_at = row
        return (
            *_cells(
                payment,
                str(payment.id),
                merchant_name,
                fee=payment.fee_amount,
                net=payment.net_amount,
                settled_at=settled_at,
                external_id=payment.external_id,
            ),
            payment.identifier,
            payment.fee_bearer,
            _money(payment.total_amount, payment.currency),
            _money(payment.amount_refunded, payment.currency),
        )

    async for line in _stream(session, statement, PAYMENT_COLUMNS, cells):
        yield line


def _debit_standing(
    debited: InstrumentedAttribute[bool], reference: SQLColumnExpression[str], movement: Movement
) -> Any:
    return case((debited, _booked(reference, movement)))


async def payouts(session: AsyncSession, wanted: ExportFilter) -> AsyncIterator[str]:
    """Oldest first; those held for approval included (status pending, not settled)."""
    settled = _debit_standing(Payout.debited, Payout.reference, Movement.PAID_OUT)
    statement = await _statement(session, wanted, Payout, settled, Payout.reference)

    def cells(row: Any) -> Sequence[Any]:
        payout, merchant_name, settled_at = row
        return (
            *_cells(
                payout,
                payout.reference,
                merchant_name,
                fee=payout.fee_amount,
                net=payout.total_debited,
                settled_at=settled_at,
                external_id=payout.external_id,
            ),
            payout.completed_at,
        )

    async for line in _stream(session, statement, PAYOUT_COLUMNS, cells):
        yield line


async def refunds(session: AsyncSession, wanted: ExportFilter) -> AsyncIterator[str]:
    """Oldest first. A refund has no fee (the payment's commission is not returned) and no
    external_id of its own: its payment's is given."""
    settled = _debit_standing(Refund.debited, Refund.reference, Movement.REFUNDED)
    statement = (
        (await _statement(session, wanted, Refund, settled, Refund.reference))
        .join(Payment, Payment.id == Refund.payment_id)
        .add_columns(Payment.external_id)
    )

    def cells(row: Any) -> Sequence[Any]:
        refund, merchant_name, settled_at, external_id = row
        return (
            *_cells(
                refund,
                refund.reference,
                merchant_name,
                fee=0,
                net=refund.amount,
                settled_at=settled_at,
                external_id=external_id,
            ),
            str(refund.payment_id),
            refund.completed_at,
        )

    async for line in _stream(session, statement, REFUND_COLUMNS, cells):
        yield line
