"""Whether an operator's route is up, per connector, operator and operation: what Cauri sees
of its recent exchanges (a circuit breaker over the failure rate of the last minutes) and what
connectors report (pawaPay's availability). Worst of the two.

A closed route refuses new payments and payouts at once, instead of leaving each customer
waiting on a timeout; status queries go on, and their answers reopen it. With no traffic the
window empties and the next request is let through (the breaker's half-open trial).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.connectors.registry import SIMULATOR
from cauri.operators.protocol import ReportsAvailability
from cauri.runtime import Runtime

# The breaker: over the exchanges of the last WINDOW, at least MIN_EXCHANGES of them, this
# share failed (no answer, 5xx, 429) closes the route, this one degrades it.
WINDOW = timedelta(minutes=10)
MIN_EXCHANGES = 5
CLOSED_AT, DEGRADED_AT = 0.5, 0.2


class State(StrEnum):
    OPERATIONAL = "operational"
    DEGRADED = "degraded"
    CLOSED = "closed"


_ORDER = (State.OPERATIONAL, State.DEGRADED, State.CLOSED)


def worst(*states: State) -> State:
    return max(states, key=_ORDER.index)


@dataclass(frozen=True)
class Route:
    connector: str
    operator: str
    action: str  # collect | disburse | refund


_OBSERVED = text(
    """
    SELECT o.connector, o.operator, o.action,
           count(*) AS total,
           count(*) FILTER (
               WHERE e.response_status IS NULL
                  OR e.response_status >= 500
                  OR e.response_status = 429
           ) AS failed
    FROM operator_exchanges e
    JOIN operator_operations o ON o.id = e.operation_id
    WHERE e.created_at >= :since
      AND e.action NOT IN ('callback', 'manual_settlement')
      AND e.connector = ANY(:connectors)
    GROUP BY o.connector, o.operator, o.action
    """
)


def _observed_state(total: int, failed: int) -> State:
    if total < MIN_EXCHANGES:
        return State.OPERATIONAL
    share = failed / total
    if share >= CLOSED_AT:
        return State.CLOSED
    return State.DEGRADED if share >= DEGRADED_AT else State.OPERATIONAL


async def states(
    session: AsyncSession, runtime: Runtime, routes: Iterable[Route]
) -> dict[Route, State]:
    """The state of each route, from the database and what connectors last reported: no
    connector is asked (`refresh` does that, outside any transaction)."""
    wanted = [r for r in routes if r.connector != SIMULATOR]
    found = {route: State.OPERATIONAL for route in routes}
    if not wanted:
        return found
    connectors = sorted({r.connector for r in wanted})
    since = runtime.clock.now() - WINDOW
    rows = await session.execute(_OBSERVED, {"since": since, "connectors": connectors})
    observed = {
        Route(connector, operator, action): _observed_state(total, failed)
        for connector, operator, action, total, failed in rows
    }
    reporters = await reporting(session, runtime, connectors)
    reports = {c: await reporters[c].availability(ask=False) for c in reporters}
    for route in wanted:
        reported = reports.get(route.connector, {}).get((route.operator, route.action))
        found[route] = worst(
            observed.get(route, State.OPERATIONAL),
            State(reported) if reported in {s.value for s in State} else State.OPERATIONAL,
        )
    return found


async def state(session: AsyncSession, runtime: Runtime, route: Route) -> State:
    """One route's state on the payment path."""
    return (await states(session, runtime, [route]))[route]


async def reporting(
    session: AsyncSession, runtime: Runtime, connectors: Iterable[str]
) -> dict[str, ReportsAvailability]:
    """The connectors among these that report availability (pawaPay), by name."""
    found: dict[str, ReportsAvailability] = {}
    for connector in connectors:
        routed = await runtime.operators.by_name(session, connector)
        if routed is not None and isinstance(routed.adapter, ReportsAvailability):
            found[connector] = routed.adapter
    return found


async def refresh(reporters: Mapping[str, ReportsAvailability]) -> None:
    """Asks each connector whose report is stale. Network: call it with no transaction open."""
    for reporter in reporters.values():
        await reporter.availability(ask=True)
