"""The reads every domain needs the same way: a merchant's resource by its reference or by
the merchant's external_id, and a row locked for a state change."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import ColumnElement, FromClause, or_, select
from sqlalchemy.dialects.postgresql import Insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from cauri.models.checkout import CheckoutSession, PaymentLink
from cauri.models.payments import Payment
from cauri.models.payouts import Payout
from cauri.models.plans import InstallmentPlan

Owned = TypeVar("Owned", Payment, Payout, InstallmentPlan, CheckoutSession, PaymentLink)
Row = TypeVar("Row")


async def owned(
    session: AsyncSession,
    model: type[Owned],
    key: InstrumentedAttribute[Any],
    key_value: object | None,
    *,
    merchant_id: str,
    livemode: bool,
    reference: str,
    lock: bool = False,
) -> Owned | None:
    """By its key (`key_value`, None when `reference` cannot be one) or by the merchant's
    external_id, within one merchant's environment. A key wins over an external_id that
    happens to spell the same."""
    match: ColumnElement[bool] = model.external_id == reference
    if key_value is not None:
        match = or_(key == key_value, match)
    statement = (
        select(model)
        .where(model.merchant_id == merchant_id, model.livemode == livemode, match)
        .order_by(key != key_value if key_value is not None else model.created_at)
        .limit(1)
    )
    if lock:
        statement = statement.with_for_update().execution_options(populate_existing=True)
    return (await session.scalars(statement)).one_or_none()


async def locked(session: AsyncSession, model: type[Row], *criteria: Any) -> Row | None:
    """The row, locked FOR UPDATE. populate_existing: a caller that read it before holds it
    in the session; without a refresh, the state checked under the lock would be the one
    read before waiting for it, and a row could change state twice."""
    statement = (
        select(model).where(*criteria).with_for_update().execution_options(populate_existing=True)
    )
    return (await session.scalars(statement)).one_or_none()


def unless_replayed(statement: Insert, table: FromClause) -> Insert:
    """`statement` writing nothing when its row's `external_id` is taken in the merchant's
    environment: each merchant resource's unique index on (merchant_id, livemode,
    external_id) arbitrates, so a concurrent replay waits on it, then finds the first row."""
    return statement.on_conflict_do_nothing(
        index_elements=[table.c.merchant_id, table.c.livemode, table.c.external_id],
        index_where=table.c.external_id.is_not(None),
    )
