"""What the staff see first: today's traffic and what needs someone.

- Today's figures (the UTC day: the platform defines no other) of payments and payouts, per
  operator and per connector, test and live apart, per currency: how many, how many
  succeeded and failed, the volume that succeeded, and the success rate over those decided
  (a pending one is neither a success nor a failure yet). A payment's connector is the one
  its operator operation went through; test mode's is the simulator; a live one with no
  operation (refused before any request) has none.
- Payouts held for approval, oldest first.
- Operator operations under review (`review_required_at`: an outcome unknown past the poll
  horizon, a connector missing or unbuildable, a row ended while its request was pending),
  oldest first: money that only a person can settle (`cauri exchanges settle`).
- Payments stuck pending longer than `STUCK_AFTER` (a card payment only once its page's
  lifetime, CAURI_CARD_PAYMENT_TTL, is over: until then its customer may still pay).
- Failing webhook endpoints: deliveries of the last `FAILING_WINDOW` that gave up or whose
  attempts so far failed, per merchant, environment and address, with the endpoint's
  circuit breaker.
- Each live route's availability (cauri.calls.availability), from the database and what
  connectors last reported: no connector is asked.

Each figure is one aggregate over its table (like `/metrics`): no row is loaded but those
listed, at most `LISTED` per list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Generic, TypeVar

from sqlalchemy import (
    ColumnElement,
    SQLColumnExpression,
    String,
    and_,
    case,
    cast,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls import availability
from cauri.calls.availability import Route
from cauri.calls.requests import Action
from cauri.connectors.registry import SIMULATOR
from cauri.connectors.service import connectors
from cauri.kit.outcomes import Tally, tally_columns
from cauri.kit.pagination import Page, paginate
from cauri.models import OperatorOperation, Payment, Payout
from cauri.models.payouts import APPROVAL_REQUIRED
from cauri.operators.catalogue import CATALOGUE
from cauri.runtime import Runtime
from cauri.webhooks.failing import FailingEndpoint, failing_endpoints

STUCK_AFTER = timedelta(hours=1)
LISTED = 50

_CARDS = [mode.operator for mode in CATALOGUE if mode.is_card]

Row = TypeVar("Row")


@dataclass(frozen=True)
class Volume(Tally):
    """One operator's (or connector's) traffic of the day in one environment and currency."""

    name: str | None  # None: no connector (a live request refused before it was sent)
    livemode: bool
    currency: str


@dataclass(frozen=True)
class Traffic:
    by_operator: Sequence[Volume]
    by_connector: Sequence[Volume]


@dataclass(frozen=True)
class Listed(Generic[Row]):
    rows: Sequence[Row]  # at most LISTED, oldest first
    total: int


@dataclass(frozen=True)
class RouteState:
    operator: str
    action: str
    connector: str
    state: str  # operational | degraded | closed


@dataclass(frozen=True)
class Overview:
    day: date
    payments: Traffic
    payouts: Traffic
    awaiting_approval: Listed[Payout]
    under_review: Listed[OperatorOperation]
    stuck_payments: Listed[Payment]
    stuck_after: timedelta
    failing_endpoints: Sequence[FailingEndpoint]
    routes: Sequence[RouteState]


async def _volumes(
    session: AsyncSession,
    key: SQLColumnExpression[Any],
    model: type[Payment] | type[Payout],
    succeeded: ColumnElement[bool],
    day: tuple[datetime, datetime],
    joined: ColumnElement[bool] | None = None,
) -> list[Volume]:
    statement = select(
        *tally_columns(model.status, model.amount, succeeded), key, model.livemode, model.currency
    ).where(model.created_at >= day[0], model.created_at < day[1])
    if joined is not None:
        statement = statement.outerjoin(OperatorOperation, joined)
    rows = await session.execute(
        statement.group_by(key, model.livemode, model.currency).order_by(
            model.livemode, key, model.currency
        )
    )
    return [Volume(*row) for row in rows]


async def _traffic(
    session: AsyncSession,
    model: type[Payment] | type[Payout],
    subject: str,
    reference: SQLColumnExpression[str],
    action: Action,
    succeeded: ColumnElement[bool],
    day: tuple[datetime, datetime],
) -> Traffic:
    # Test mode always goes through the simulator, which records no operation.
    connector = func.coalesce(
        OperatorOperation.connector, case((~model.livemode, literal(SIMULATOR)))
    )
    operation = and_(
        OperatorOperation.subject == subject,
        OperatorOperation.subject_ref == reference,
        OperatorOperation.action == action.value,
    )
    return Traffic(
        by_operator=await _volumes(session, model.operator, model, succeeded, day),
        by_connector=await _volumes(session, connector, model, succeeded, day, operation),
    )


async def _awaiting_approval(session: AsyncSession) -> Listed[Payout]:
    held = (Payout.approval == APPROVAL_REQUIRED, Payout.status == "pending")
    order = (Payout.created_at.asc(), Payout.reference.asc())
    return Listed(*await paginate(session, Payout, held, order, Page(1, LISTED)))


async def _under_review(session: AsyncSession) -> Listed[OperatorOperation]:
    flagged = (
        OperatorOperation.status == "pending",
        OperatorOperation.review_required_at.is_not(None),
    )
    order = (OperatorOperation.review_required_at.asc(), OperatorOperation.id.asc())
    return Listed(*await paginate(session, OperatorOperation, flagged, order, Page(1, LISTED)))


async def _stuck(
    session: AsyncSession, now: datetime, after: timedelta, card_ttl: timedelta
) -> Listed[Payment]:
    stuck = (
        Payment.status == "pending",
        Payment.created_at < now - after,
        or_(Payment.operator.not_in(_CARDS), Payment.created_at < now - card_ttl),
    )
    order = (Payment.created_at.asc(), Payment.id.asc())
    return Listed(*await paginate(session, Payment, stuck, order, Page(1, LISTED)))


async def route_states(session: AsyncSession, runtime: Runtime) -> list[RouteState]:
    """Each live route with its availability (the overview's, the connectors' page)."""
    routes = [
        Route(connector, row.operator, action)
        for row in await connectors.routes(session)
        for action, connector in row.connectors.items()
        if connector is not None
    ]
    states = await availability.states(session, runtime, routes)
    return [
        RouteState(route.operator, route.action, route.connector, states[route].value)
        for route in routes
    ]


async def overview(
    session: AsyncSession, runtime: Runtime, stuck_after: timedelta = STUCK_AFTER
) -> Overview:
    now = runtime.clock.now()
    today = now.astimezone(UTC).date()
    start = datetime.combine(today, time(), tzinfo=UTC)
    day = (start, start + timedelta(days=1))
    return Overview(
        day=today,
        payments=await _traffic(
            session,
            Payment,
            "payment",
            cast(Payment.id, String),
            Action.COLLECT,
            Payment.status.in_(("succeeded", "refunded")),
            day,
        ),
        payouts=await _traffic(
            session,
            Payout,
            "payout",
            Payout.reference,
            Action.DISBURSE,
            Payout.status == "succeeded",
            day,
        ),
        awaiting_approval=await _awaiting_approval(session),
        under_review=await _under_review(session),
        stuck_payments=await _stuck(
            session, now, stuck_after, timedelta(seconds=runtime.settings.card_payment_ttl)
        ),
        stuck_after=stuck_after,
        failing_endpoints=await failing_endpoints(session, now),
        routes=await route_states(session, runtime),
    )
