"""Webhook rules: one endpoint and secret per merchant and environment, the delivery log,
test notifications, and the attempt cycle of a delivery (pending → success | failed)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Integer, String, func, insert, literal, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cauri.events import service as events
from cauri.kit.errors import Conflict, NotFound
from cauri.kit.ids import parse_uuid
from cauri.kit.pagination import Page
from cauri.merchants.auth import Caller
from cauri.merchants.service import new_webhook_secret
from cauri.models import Event, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from cauri.runtime import Runtime
from cauri.webhooks import breaker, url_safety
from cauri.webhooks.breaker import Circuit
from cauri.webhooks.delivery import AttemptOutcome, Notification, serialize
from cauri.webhooks.scheduling import attempt_now, enqueue_attempt
from cauri.webhooks.schemas import EndpointUpdate, LoggedDelivery

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


async def configure(
    session: AsyncSession, runtime: Runtime, caller: Caller, change: EndpointUpdate
) -> WebhookEndpoint:
    configured = await endpoint(session, caller, lock=True)
    if change.url_given:
        if change.url is not None:
            url_safety.require_safe(
                change.url, field="url", allow_private=runtime.settings.webhook_allow_private
            )
        configured.url = change.url
    if change.rotate_secret:
        # Attempts read the secret when they are sent: pending retries sign with the new one.
        configured.secret = new_webhook_secret()
    configured.updated_at = runtime.clock.now()
    await session.flush()
    return configured


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


async def pending_attempt(
    sessionmaker: async_sessionmaker[AsyncSession], delivery_id: uuid.UUID, attempt: int
) -> PendingAttempt | None:
    """Reads the delivery, its event and the secret as they are now, in a short session of
    its own. None when there is nothing to send: the delivery is settled, or this job is a
    stale duplicate of an attempt already recorded."""
    async with sessionmaker() as session:
        row = (
            await session.execute(
                select(
                    WebhookDelivery.url,
                    WebhookDelivery.status,
                    WebhookDelivery.attempts,
                    WebhookDelivery.series_attempts,
                    Event,
                    WebhookEndpoint.secret,
                    WebhookEndpoint.consecutive_failures,
                    WebhookEndpoint.open_until,
                )
                .join(Event, Event.id == WebhookDelivery.event_id)
                .join(
                    WebhookEndpoint,
                    (WebhookEndpoint.merchant_id == WebhookDelivery.merchant_id)
                    & (WebhookEndpoint.livemode == WebhookDelivery.livemode),
                )
                .where(WebhookDelivery.id == delivery_id)
            )
        ).one_or_none()
    if row is None:
        return None
    url, status, attempts, series_attempts, event, secret, failures, open_until = row
    if status != "pending" or attempts + 1 != attempt:
        return None
    return PendingAttempt(
        delivery_id=delivery_id,
        attempts_before=attempts,
        series_before=series_attempts,
        notification=Notification(
            url=url,
            event=event.type,
            delivery_id=str(delivery_id),
            body=serialize(events.envelope(event)),
            secret=secret,
        ),
        circuit=Circuit(event.merchant_id, event.livemode, failures, open_until),
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
    changes: dict[str, Any] = {
        "attempts": WebhookDelivery.attempts + 1,
        "series_attempts": WebhookDelivery.series_attempts + 1,
        "response_code": outcome.response_code,
        "status": status,
        "next_attempt_at": None if retry_in is None else now + timedelta(seconds=retry_in),
    }
    if outcome.succeeded:
        changes["delivered_at"] = now
    updated = (
        update(WebhookDelivery)
        .where(
            WebhookDelivery.id == pending.delivery_id,
            WebhookDelivery.status == "pending",
            WebhookDelivery.attempts == pending.attempts_before,
        )
        .values(changes)
        .returning(WebhookDelivery.id, WebhookDelivery.attempts)
        .cte("updated")
    )
    attempt = (
        insert(WebhookAttempt)
        .from_select(
            ["delivery_id", "number", "started_at", "duration_ms", "response_code", "error"],
            select(
                updated.c.id,
                updated.c.attempts,
                literal(started_at),
                literal(outcome.duration_ms),
                literal(outcome.response_code, Integer),
                literal(outcome.error, String),
            ),
        )
        .returning(WebhookAttempt.number)
        .add_cte(updated)
    )
    number = (await session.execute(attempt)).scalar_one_or_none()
    if number is None:
        return
    await breaker.record(
        session, pending.circuit, succeeded=outcome.succeeded, now=now, settings=runtime.settings
    )
    if retry_in is not None:
        await _enqueue(session, pending, attempt=number + 1, now=now, delay=retry_in)


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
