"""The reads every domain needs the same way: a merchant's resource by its reference or by
the merchant's external_id, a page of a merchant's resources, and a row locked for a state
change."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import ColumnElement, FromClause, or_, select
from sqlalchemy.dialects.postgresql import Insert, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from cauri.kit.errors import NotFound
from cauri.kit.pagination import Page, paginate
from cauri.models.checkout import CheckoutSession, PaymentLink
from cauri.models.events import Event
from cauri.models.payments import Payment
from cauri.models.payout_batches import PayoutBatch
from cauri.models.payouts import Payout
from cauri.models.plans import InstallmentPlan
from cauri.models.refunds import Refund

Named = TypeVar(
    "Named", Payment, Payout, PayoutBatch, InstallmentPlan, CheckoutSession, PaymentLink
)
Owned = TypeVar(
    "Owned",
    Payment,
    Payout,
    PayoutBatch,
    InstallmentPlan,
    CheckoutSession,
    PaymentLink,
    Refund,
    Event,
)
Row = TypeVar("Row")


class Environment(Protocol):
    """Whose resources a request reads: one merchant's, in one environment (the API's
    caller)."""

    @property
    def merchant_id(self) -> str: ...

    @property
    def livemode(self) -> bool: ...


def _as_sent(reference: str) -> str:
    return reference


@dataclass(frozen=True)
class ByReference(Generic[Named]):
    """How the API finds one of a merchant's resources: by its key, which `key_of` reads from
    the reference sent (None when it cannot be one), or by the merchant's external_id. A key
    wins over an external_id that happens to spell the same."""

    model: type[Named]
    key: InstrumentedAttribute[Any]
    missing: str
    key_of: Callable[[str], object | None] = _as_sent

    async def get(
        self, session: AsyncSession, caller: Environment, reference: str, *, lock: bool = False
    ) -> Named:
        """Within the caller's environment; NotFound (`missing`) elsewhere."""
        key_value = self.key_of(reference)
        match: ColumnElement[bool] = self.model.external_id == reference
        if key_value is not None:
            match = or_(self.key == key_value, match)
        statement = (
            select(self.model)
            .where(*_yours(self.model, caller), match)
            .order_by(self.key != key_value if key_value is not None else self.model.created_at)
            .limit(1)
        )
        if lock:
            statement = statement.with_for_update().execution_options(populate_existing=True)
        found = (await session.scalars(statement)).one_or_none()
        if found is None:
            raise NotFound(self.missing)
        return found


async def one_of_yours(
    session: AsyncSession,
    caller: Environment,
    model: type[Owned],
    match: ColumnElement[bool],
    *,
    missing: str,
) -> Owned:
    """The caller's `model` row that `match` picks; NotFound (`missing`) if it is not the
    caller's, in the caller's environment."""
    found = (
        await session.scalars(select(model).where(match, *_yours(model, caller)))
    ).one_or_none()
    if found is None:
        raise NotFound(missing)
    return found


async def newest_of_yours(
    session: AsyncSession,
    caller: Environment,
    model: type[Owned],
    key: InstrumentedAttribute[Any],
    page: Page,
    *filters: ColumnElement[bool],
) -> tuple[Sequence[Owned], int]:
    """One page of the caller's `model` rows that `filters` keep, newest first (DESIGN), rows
    made in the same instant by `key`, highest first; and how many the filters keep."""
    conditions = [*_yours(model, caller), *filters]
    return await paginate(session, model, conditions, (model.created_at.desc(), key.desc()), page)


def _yours(model: type[Owned], caller: Environment) -> list[ColumnElement[bool]]:
    return [model.merchant_id == caller.merchant_id, model.livemode == caller.livemode]


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


async def inserted_unless_replayed(
    session: AsyncSession, model: type[Named], values: Mapping[str, Any]
) -> Named | None:
    """The new row `values` describe, or None when its `external_id` is taken in the
    merchant's environment (`unless_replayed`): the caller answers with the first one."""
    table: Any = model.__table__  # a mapped class: its table
    statement = unless_replayed(insert(model).values(values), table).returning(model)
    return (await session.scalars(statement)).one_or_none()
