"""Webhook rules: one endpoint and secret per merchant and environment, the delivery log,
test notifications, and the attempt cycle of a delivery (pending → success | failed)."""

from __future__ import annotations

import asyncio
import uuid
import weakref
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    ColumnElement,
    DateTime,
    Integer,
    Row,
    Table,
    Text,
    Uuid,
    func,
    insert,
    literal_column,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from cauri.config import Settings
from cauri.connectors.secrets import sealing_keyring
from cauri.events import service as events
from cauri.kit.binds import Binds
from cauri.kit.errors import Conflict, NotFound
from cauri.kit.ids import parse_uuid
from cauri.kit.pagination import Page
from cauri.merchants import webhook_secrets
from cauri.merchants.caller import Caller
from cauri.models import Event, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from cauri.runtime import Runtime
from cauri.webhooks import breaker, url_safety
from cauri.webhooks.breaker import Circuit
from cauri.webhooks.delivery import AttemptOutcome, Notification, serialize
from cauri.webhooks.scheduling import attempt_now, enqueue_attempt, next_attempt
from cauri.webhooks.schemas import EndpointUpdate, LoggedDelivery
from cauri.worker import queue

TEST_EVENT = "webhook.test"
TEST_MESSAGE = "Ceci est une notification de test envoyée par Cauri."
NO_ENDPOINT_REASON = "Aucun endpoint n'est configuré pour cet environnement."


@dataclass(frozen=True)
class WebhookTestResult:
    sent: bool
    delivery_id: uuid.UUID
    url: str | None


@dataclass(frozen=True)
class PendingAttempt:
    """What one attempt needs, read before the HTTP call (no connection held during it)."""

    delivery_id: uuid.UUID
    attempts_before: int
    series_before: int
    notification: Notification
    circuit: Circuit


async def endpoint(session: AsyncSession, caller: Caller, *, lock: bool = False) -> WebhookEndpoint:
    statement = select(WebhookEndpoint).where(
        WebhookEndpoint.merchant_id == caller.merchant_id,
        WebhookEndpoint.livemode == caller.livemode,
    )
    found = (
        await session.scalars(statement.with_for_update() if lock else statement)
    ).one_or_none()
    # Every merchant is created with both endpoints (merchants.service); a missing one is a bug.
    assert found is not None, "merchant without a webhook endpoint row"
    return found


@dataclass(frozen=True)
class Configured:
    endpoint: WebhookEndpoint
    secret: str  # in clear, to show the merchant


async def configure(
    session: AsyncSession, runtime: Runtime, caller: Caller, change: EndpointUpdate
) -> Configured:
    configured = await endpoint(session, caller, lock=True)
    if change.url_given:
        if change.url is not None:
            reach = url_safety.Reach.configured(runtime.settings)
            url_safety.require_safe(change.url, field="url", reach=reach)
        configured.url = change.url
    if change.rotate_secret:
        # Attempts read the secret when they are sent: pending retries sign with the new one.
        secret = webhook_secrets.issue(sealing_keyring(runtime.settings), configured)
    else:
        secret = webhook_secrets.revealed(runtime.settings, configured)
    configured.updated_at = runtime.clock.now()
    await session.flush()
    return Configured(configured, secret)


async def send_test(session: AsyncSession, runtime: Runtime, caller: Caller) -> WebhookTestResult:
    """Emits a webhook.test event, delivered like any other. Without an endpoint the event is
    still recorded (`GET /events/{id}`), and its id is returned as `delivery_id` — the id a
    delivery would carry — with `sent: false`; no delivery exists for it."""
    now = runtime.clock.now()
    event_id = await events.emit(
        session,
        merchant_id=caller.merchant_id,
        livemode=caller.livemode,
        type=TEST_EVENT,
        data={"message": TEST_MESSAGE, "sent_at": now.isoformat()},
        at=now,
    )
    delivery = await session.get(WebhookDelivery, event_id)
    return WebhookTestResult(delivery is not None, event_id, delivery.url if delivery else None)


# What the log shows besides the delivery row: the resource its event is about, and the
# last attempt's error (through the attempts' unique (delivery_id, number) index).
_LOGGED = select(
    WebhookDelivery,
    Event.data["reference"].astext,
    select(WebhookAttempt.error)
    .where(WebhookAttempt.delivery_id == WebhookDelivery.id)
    .order_by(WebhookAttempt.number.desc())
    .limit(1)
    .correlate(WebhookDelivery)
    .scalar_subquery(),
).join(Event, Event.id == WebhookDelivery.event_id)


def _yours(caller: Caller) -> list[ColumnElement[bool]]:
    return [
        WebhookDelivery.merchant_id == caller.merchant_id,
        WebhookDelivery.livemode == caller.livemode,
    ]


async def list_deliveries(
    session: AsyncSession, caller: Caller, page: Page, status: str | None
) -> tuple[list[LoggedDelivery], int]:
    """The log, newest first."""
    conditions = _yours(caller)
    if status is not None:
        conditions.append(WebhookDelivery.status == status)
    total = await session.scalar(
        select(func.count()).select_from(WebhookDelivery).where(*conditions)
    )
    rows = await session.execute(
        _LOGGED.where(*conditions)
        .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
        .offset(page.offset)
        .limit(page.per_page)
    )
    return [LoggedDelivery(*row) for row in rows], int(total or 0)


async def logged(session: AsyncSession, delivery: WebhookDelivery) -> LoggedDelivery:
    row = (await session.execute(_LOGGED.where(WebhookDelivery.id == delivery.id))).one()
    return LoggedDelivery(*row)


async def retry(
    session: AsyncSession, runtime: Runtime, caller: Caller, delivery_id: str
) -> WebhookDelivery:
    """Sends a delivery again now, to the address the event would go to now: its
    `callback_url`, else the endpoint (which the merchant may have fixed since). A failed
    delivery gets a new series of attempts; a pending one gets its next attempt at once
    (its schedule goes on from there). An attempt under way is not doubled."""
    as_uuid = parse_uuid(delivery_id)
    if as_uuid is None:
        raise NotFound("Livraison introuvable.")
    row = (
        await session.execute(
            select(WebhookDelivery, Event.callback_url)
            .join(Event, Event.id == WebhookDelivery.event_id)
            .where(WebhookDelivery.id == as_uuid, *_yours(caller))
            .with_for_update(of=WebhookDelivery)
        )
    ).one_or_none()
    if row is None:
        raise NotFound("Livraison introuvable.")
    delivery, callback_url = row
    if delivery.status == "success":
        raise Conflict("Cette livraison a abouti : il n'y a rien à relancer.")
    url = callback_url or (await endpoint(session, caller)).url
    if url is None:
        raise Conflict(NO_ENDPOINT_REASON)
    now = runtime.clock.now()
    delivery.url = url
    if delivery.status == "failed":
        delivery.status = "pending"
        delivery.series_attempts = 0
    delivery.next_attempt_at = now
    await session.flush()
    await attempt_now(
        session,
        delivery_id=delivery.id,
        attempt=delivery.attempts + 1,
        merchant_id=delivery.merchant_id,
        livemode=delivery.livemode,
        now=now,
    )
    return delivery


# What the attempts of a batch need, in one round trip without a transaction (a plain
# read). Built once.
_PENDING = text(
    "SELECT d.id, d.url, d.status, d.attempts, d.series_attempts, "
    "  e.merchant_id, e.livemode, e.type, e.data, e.created_at, "
    "  w.secret, w.sealed_secret, w.consecutive_failures, w.open_until "
    "FROM webhook_deliveries d JOIN events e ON e.id = d.event_id "
    "JOIN webhook_endpoints w ON w.merchant_id = d.merchant_id AND w.livemode = d.livemode "
    "WHERE d.id = ANY(:ids)"
).columns(data=Event.data.type)


class _Reads:
    """Gathers the reads asked for in one turn of the event loop into one query: the
    worker starts the jobs of a claim together, so their reads share a round trip."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.waiting: dict[uuid.UUID, list[asyncio.Future[Row[Any] | None]]] = {}

    def read(self, delivery_id: uuid.UUID) -> asyncio.Future[Row[Any] | None]:
        loop = asyncio.get_running_loop()
        if not self.waiting:
            loop.call_soon(lambda: _keep(loop.create_task(self._flush())))
        found: asyncio.Future[Row[Any] | None] = loop.create_future()
        self.waiting.setdefault(delivery_id, []).append(found)
        return found

    async def _flush(self) -> None:
        batch, self.waiting = self.waiting, {}
        try:
            async with self.engine.connect() as connection:
                await connection.execution_options(isolation_level="AUTOCOMMIT")
                rows = {
                    row[0]: row for row in await connection.execute(_PENDING, {"ids": list(batch)})
                }
        except Exception as exc:  # each reader gets the failure, as its own read would
            for futures in batch.values():
                for future in futures:
                    if not future.done():  # its job may have been cancelled meanwhile
                        future.set_exception(exc)
            return
        for delivery_id, futures in batch.items():
            for future in futures:
                if not future.done():
                    future.set_result(rows.get(delivery_id))


_tasks: set[asyncio.Task[None]] = set()


def _keep(task: asyncio.Task[None]) -> None:
    """Holds a flush task until it ends (the loop keeps only weak references)."""
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


_readers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[AsyncEngine, _Reads]] = (
    weakref.WeakKeyDictionary()
)


async def pending_attempt(
    engine: AsyncEngine, settings: Settings, delivery_id: uuid.UUID, attempt: int
) -> PendingAttempt | None:
    """Reads the delivery, its event and the secret as they are now, outside any transaction
    and together with the other attempts starting now. None when there is nothing to send:
    the delivery is settled, or this job is a stale duplicate of an attempt already
    recorded."""
    by_engine = _readers.setdefault(asyncio.get_running_loop(), {})
    reads = by_engine.get(engine) or by_engine.setdefault(engine, _Reads(engine))
    row = await reads.read(delivery_id)
    if row is None:
        return None
    (_, url, status, attempts, series_attempts, merchant_id, livemode, kind, data, created_at,
     clear, sealed, failures, open_until) = tuple(row)  # fmt: skip
    if status != "pending" or attempts + 1 != attempt:
        return None
    # A transient row, to shape the envelope exactly as the API shows the event.
    event = Event(
        id=delivery_id,
        merchant_id=merchant_id,
        livemode=livemode,
        type=kind,
        data=data,
        created_at=created_at,
    )
    return PendingAttempt(
        delivery_id=delivery_id,
        attempts_before=attempts,
        series_before=series_attempts,
        notification=Notification(
            url=url,
            event=kind,
            delivery_id=str(delivery_id),
            body=serialize(events.envelope(event)),
            secret=webhook_secrets.reveal(settings, merchant_id, livemode, sealed, clear),
        ),
        circuit=Circuit(merchant_id, livemode, failures, open_until),
    )


def next_step(
    succeeded: bool, series_attempts: int, delays: list[float]
) -> tuple[str, float | None]:
    """The delivery's status after the `series_attempts`-th attempt of its series, and the
    delay before the next attempt if there is one (spec: up to 5 attempts)."""
    if succeeded:
        return "success", None
    if series_attempts <= len(delays):
        return "pending", delays[series_attempts - 1]
    return "failed", None


_DELIVERIES = cast(Table, WebhookDelivery.__table__)
_ATTEMPTS = cast(Table, WebhookAttempt.__table__)


@dataclass(frozen=True)
class _Attempted:
    """What `_RECORD` writes of an attempt, guarded by the attempt count read before it."""

    delivery: uuid.UUID
    attempts_before: int
    code: int | None
    status: str
    next_at: datetime | None
    delivered_at: datetime | None
    started_at: datetime
    duration_ms: int | None
    error: str | None
    retry: bool


_ATTEMPTED = Binds(
    _Attempted,
    delivery=Uuid(),
    attempts_before=Integer(),
    code=Integer(),
    status=Text(),
    next_at=DateTime(timezone=True),
    delivered_at=DateTime(timezone=True),
    started_at=DateTime(timezone=True),
    duration_ms=Integer(),
    error=Text(),
    retry=Boolean(),
)
_UPDATED = (
    update(_DELIVERIES)
    .where(
        _DELIVERIES.c.id == _ATTEMPTED["delivery"],
        _DELIVERIES.c.status == literal_column("'pending'"),
        _DELIVERIES.c.attempts == _ATTEMPTED["attempts_before"],
    )
    .values(
        attempts=_DELIVERIES.c.attempts + 1,
        series_attempts=_DELIVERIES.c.series_attempts + 1,
        response_code=_ATTEMPTED["code"],
        status=_ATTEMPTED["status"],
        next_attempt_at=_ATTEMPTED["next_at"],
        delivered_at=func.coalesce(_ATTEMPTED["delivered_at"], _DELIVERIES.c.delivered_at),
    )
    .returning(_DELIVERIES.c.id, _DELIVERIES.c.attempts, _DELIVERIES.c.created_at)
    .cte()
)
_ATTEMPT = (
    insert(_ATTEMPTS)
    .from_select(
        [
            "delivery_id",
            "delivery_created_at",
            "number",
            "started_at",
            "duration_ms",
            "response_code",
            "error",
        ],
        select(
            _UPDATED.c.id,
            _UPDATED.c.created_at,
            _UPDATED.c.attempts,
            _ATTEMPTED["started_at"],
            _ATTEMPTED["duration_ms"],
            _ATTEMPTED["code"],
            _ATTEMPTED["error"],
        ),
    )
    .returning(_ATTEMPTS.c.number)
    .cte()
)
_COUNTED = breaker.counted(_ATTEMPT)
_RETRY = select(literal_column("1")).select_from(_ATTEMPT).where(_ATTEMPTED["retry"]).cte()
_RETRIED = queue.queued(_RETRY)
# The attempt, the delivery moved on, the breaker's count and the next attempt's job, in one
# statement guarded by the attempt count read before the call.
_RECORD = select(_ATTEMPT.c.number).add_cte(_COUNTED.cte, _RETRIED.cte)


async def record_attempt(
    session: AsyncSession,
    runtime: Runtime,
    pending: PendingAttempt,
    started_at: datetime,
    outcome: AttemptOutcome,
) -> None:
    """Writes the attempt and moves the delivery on (success, a retry on the schedule, or
    failed once it is exhausted), in one statement guarded by the attempt count read before
    the call: a second run of the same job (a lost lease) records nothing."""
    now = runtime.clock.now()
    status, retry_in = next_step(
        outcome.succeeded, pending.series_before + 1, runtime.settings.retry_delays
    )
    attempted = _Attempted(
        delivery=pending.delivery_id,
        attempts_before=pending.attempts_before,
        code=outcome.response_code,
        status=status,
        next_at=None if retry_in is None else now + timedelta(seconds=retry_in),
        delivered_at=now if outcome.succeeded else None,
        started_at=started_at,
        duration_ms=outcome.duration_ms,
        error=outcome.error,
        retry=retry_in is not None,
    )
    counted = breaker.outcome(
        pending.circuit, succeeded=outcome.succeeded, now=now, settings=runtime.settings
    )
    retried = next_attempt(
        delivery_id=pending.delivery_id,
        attempt=pending.attempts_before + 2,
        merchant_id=pending.circuit.merchant_id,
        livemode=pending.circuit.livemode,
        now=now,
        delay=retry_in or 0,
    )
    await session.execute(
        _RECORD,
        _ATTEMPTED.values(attempted) | _COUNTED.values(counted) | _RETRIED.values(retried),
    )


async def postpone(
    session: AsyncSession, runtime: Runtime, pending: PendingAttempt, until: datetime
) -> None:
    """Moves an attempt held back by the endpoint's open breaker to `until`, unmade and
    uncounted (cauri.webhooks.breaker); a stale duplicate of the job moves nothing."""
    now = runtime.clock.now()
    moved = await session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.id == pending.delivery_id,
            WebhookDelivery.status == "pending",
            WebhookDelivery.attempts == pending.attempts_before,
        )
        .values(next_attempt_at=until)
        .returning(WebhookDelivery.id)
    )
    if moved.first() is not None:
        await _enqueue(
            session,
            pending,
            attempt=pending.attempts_before + 1,
            now=now,
            delay=(until - now).total_seconds(),
        )


async def _enqueue(
    session: AsyncSession, pending: PendingAttempt, *, attempt: int, now: datetime, delay: float
) -> None:
    await enqueue_attempt(
        session,
        delivery_id=pending.delivery_id,
        attempt=attempt,
        merchant_id=pending.circuit.merchant_id,
        livemode=pending.circuit.livemode,
        now=now,
        delay=delay,
    )
