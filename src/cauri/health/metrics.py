"""The figures of `GET /metrics`, in Prometheus' text format.

HTTP requests are counted in this process as they are answered (cauri.kit.access). What the
business did is read from the database at each scrape, because the worker that settles
payments and delivers webhooks may run in another process (`cauri worker`): one statement of
aggregates, bounded by a statement timeout so that a slow scrape cannot hold the database.
Each count covers every row of its table (payments, payouts, deliveries, exchanges): a
sequential scan per scrape, a few milliseconds per hundred thousand rows.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from datetime import datetime

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.access import HttpMetrics
from cauri.runtime import Runtime
from cauri.worker import lanes

STATEMENT_TIMEOUT_MS = 5000

_BY_OPERATOR = (
    "SELECT operator, status, livemode, count(*) FROM {table} GROUP BY operator, status, livemode"
)
_PAYMENTS = text(_BY_OPERATOR.format(table="payments"))
_PAYOUTS = text(_BY_OPERATOR.format(table="payouts"))
_DELIVERIES = text(
    "SELECT status, livemode, count(*) FROM webhook_deliveries GROUP BY status, livemode"
)
# The same reading of an exchange as the routes' availability (cauri.calls.availability):
# no answer, a 429 and a 5xx are the operator's failures; a 4xx is its refusal.
_EXCHANGES = text(
    """
    SELECT connector, result, count(*) FROM (
        SELECT connector, CASE
            WHEN action = 'callback' THEN 'received'
            WHEN action = 'manual_settlement' THEN 'manual'
            WHEN response_status IS NULL THEN 'no_response'
            WHEN response_status = 429 THEN 'throttled'
            WHEN response_status >= 500 THEN 'server_error'
            WHEN response_status >= 400 THEN 'refused'
            ELSE 'answered' END AS result
        FROM operator_exchanges
    ) AS exchanges GROUP BY connector, result
    """
)
# Due: queued and past its time, waiting for a worker's slot; the oldest due job's wait is
# how far behind its lane is.
_JOBS = text(
    """
    SELECT lane,
        count(*) FILTER (WHERE status = 'queued' AND run_at <= :now),
        count(*) FILTER (WHERE status = 'queued' AND run_at > :now),
        count(*) FILTER (WHERE status = 'running'),
        count(*) FILTER (WHERE status = 'failed'),
        min(run_at) FILTER (WHERE status = 'queued' AND run_at <= :now)
    FROM jobs GROUP BY lane
    """
)
JOB_STATES = ("due", "scheduled", "running", "failed")


def bearer_matches(authorization: str | None, token: str) -> bool:
    """Whether `Authorization: Bearer <token>` carries the token, compared in constant time."""
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


def _mode(livemode: bool) -> str:
    return "live" if livemode else "test"


def _by_operator(name: str, what: str, rows: Iterable[tuple[str, str, bool, int]]) -> Metric:
    family = GaugeMetricFamily(
        name,
        f"{what} in the database, by operator, status and mode (test or live).",
        labels=["operator", "status", "mode"],
    )
    for operator, status, livemode, count in rows:
        family.add_metric([operator, status, _mode(livemode)], count)
    return family


async def _business(session: AsyncSession, now: datetime) -> list[Metric]:
    await session.execute(text(f"SET LOCAL statement_timeout = {STATEMENT_TIMEOUT_MS}"))
    payments = await session.execute(_PAYMENTS)
    payouts = await session.execute(_PAYOUTS)
    families = [
        _by_operator("cauri_payments", "Payments", payments),
        _by_operator("cauri_payouts", "Payouts", payouts),
    ]
    deliveries = GaugeMetricFamily(
        "cauri_webhook_deliveries",
        "Webhook deliveries in the database, by status (pending, success, failed) and mode.",
        labels=["status", "mode"],
    )
    for status, livemode, count in await session.execute(_DELIVERIES):
        deliveries.add_metric([status, _mode(livemode)], count)
    exchanges = CounterMetricFamily(
        "cauri_operator_exchanges",
        "HTTP exchanges with operators, by connector and result (answered, refused, "
        "throttled, server_error, no_response; received for their notifications, manual for "
        "the staff's settlements).",
        labels=["connector", "result"],
    )
    for connector, result, count in await session.execute(_EXCHANGES):
        exchanges.add_metric([connector, result], count)
    jobs = GaugeMetricFamily(
        "cauri_jobs",
        "Jobs in the queue, by lane and state (due: waiting for a worker; scheduled: for "
        "later; running; failed: gave up).",
        labels=["lane", "state"],
    )
    oldest = GaugeMetricFamily(
        "cauri_jobs_oldest_due_seconds",
        "How long the oldest due job of each lane has been waiting for a worker (0: none).",
        labels=["lane"],
    )
    by_lane = {row[0]: row[1:] for row in await session.execute(_JOBS, {"now": now})}
    for lane in sorted(set(lanes.SHARES) | set(by_lane)):
        *counts, oldest_due = by_lane.get(lane, (0, 0, 0, 0, None))
        for state, count in zip(JOB_STATES, counts, strict=True):
            jobs.add_metric([lane, state], count)
        oldest.add_metric([lane], (now - oldest_due).total_seconds() if oldest_due else 0.0)
    return [*families, deliveries, exchanges, jobs, oldest]


class _Read(Collector):
    """Figures read before the exposition is written."""

    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterable[Metric]:
        return self.families


async def exposition(runtime: Runtime, http: HttpMetrics) -> bytes:
    """The whole page: this process's HTTP figures and the database's; when the database does
    not answer, `cauri_database_up 0` and the HTTP figures alone."""
    up = GaugeMetricFamily("cauri_database_up", "Whether the database answered this scrape.")
    try:
        async with runtime.sessionmaker() as session, session.begin():
            families = await _business(session, runtime.clock.now())
        up.add_metric([], 1)
    except (SQLAlchemyError, OSError):
        families = []
        up.add_metric([], 0)
    registry = CollectorRegistry(auto_describe=True)
    for collector in (*http.collectors(), _Read([up, *families])):
        registry.register(collector)
    return generate_latest(registry)
