"""Events are written in the transaction of the state change they report (the outbox),
together with their webhook delivery and the job that makes its first attempt."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import NotFound
from cauri.kit.ids import parse_uuid
from cauri.kit.pagination import Page, paginate
from cauri.merchants.auth import Caller
from cauri.models import Event
from cauri.webhooks.scheduling import first_attempt
from cauri.worker import queue

# One round trip for the event and, when it has somewhere to go (the payment's `callback_url`,
# else the environment's endpoint), its delivery (whose id is the event's) and the job of its
# first attempt, with the worker's NOTIFY: it runs on every payment settlement. Built once, so
# its cache key is computed once; plain SQL on the tables, so the ORM takes no part in it.
# PostgreSQL runs every data-modifying CTE to completion whether the last SELECT reads it or
# not; the job CTE and its NOTIFY are the worker's own (cauri.worker.queue). Constant text
# (S608: no input is ever concatenated into it).
_EMIT = text(
    "WITH new_event AS (INSERT INTO events (id, merchant_id, livemode, type, data, "  # noqa: S608
    "  callback_url, created_at) VALUES (:new_id, :owner, :env, :kind, :payload, :callback, :at) "
    "  RETURNING id), "
    "target AS (SELECT coalesce(CAST(:callback AS text), (SELECT url FROM webhook_endpoints "
    "  WHERE merchant_id = :owner AND livemode = :env)) AS url), "
    "delivery AS (INSERT INTO webhook_deliveries (id, event_id, merchant_id, livemode, event, "
    "  url, status, attempts, series_attempts, created_at, next_attempt_at) "
    "  SELECT new_event.id, new_event.id, CAST(:owner AS text), CAST(:env AS boolean), "
    "  CAST(:kind AS text), target.url, 'pending', 0, 0, CAST(:at AS timestamptz), "
    "  CAST(:at AS timestamptz) FROM new_event, target WHERE target.url IS NOT NULL "
    "  RETURNING id), "
    f"{queue.insert_job('delivery')} "
    f"SELECT job.id, {queue.NOTIFY} FROM job"
).bindparams(bindparam("payload", type_=Event.data.type))


async def emit(
    session: AsyncSession,
    *,
    merchant_id: str,
    livemode: bool,
    type: str,
    data: dict[str, Any],
    at: datetime,
    callback_url: str | None = None,
) -> uuid.UUID:
    """Records the event and, when it has somewhere to go (the payment's `callback_url`,
    else the environment's endpoint), its delivery and first delivery job."""
    event_id = uuid.uuid4()
    await session.execute(
        _EMIT,
        {
            "new_id": event_id,
            "owner": merchant_id,
            "env": livemode,
            "kind": type,
            "payload": data,
            "callback": callback_url,
            "at": at,
            **first_attempt(
                delivery_id=event_id, merchant_id=merchant_id, livemode=livemode, now=at
            ),
        },
    )
    return event_id


def envelope(event: Event) -> dict[str, Any]:
    """The notification as sent and as `GET /events/{id}` shows it (spec: Envelope)."""
    return {
        "id": str(event.id),
        "event": event.type,
        "livemode": event.livemode,
        "created_at": event.created_at.isoformat(),
        "data": event.data,
    }


async def get(session: AsyncSession, caller: Caller, event_id: str) -> Event:
    as_uuid = parse_uuid(event_id)
    event = None
    if as_uuid is not None:
        event = (
            await session.scalars(
                select(Event).where(
                    Event.id == as_uuid,
                    Event.merchant_id == caller.merchant_id,
                    Event.livemode == caller.livemode,
                )
            )
        ).one_or_none()
    if event is None:
        raise NotFound("Événement introuvable.")
    return event


async def list_events(
    session: AsyncSession, caller: Caller, page: Page, type: str | None
) -> tuple[Sequence[Event], int]:
    conditions = [Event.merchant_id == caller.merchant_id, Event.livemode == caller.livemode]
    if type is not None:
        conditions.append(Event.type == type)
    return await paginate(
        session,
        Event,
        conditions,
        (
            Event.created_at.desc(),
            Event.id.desc(),
        ),
        page,
    )
