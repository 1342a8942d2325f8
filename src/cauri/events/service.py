"""Events are written in the transaction of the state change they report (the outbox),
together with their webhook delivery and the job that makes its first attempt."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.events.types import declared
from cauri.kit import cte
from cauri.kit.errors import NotFound
from cauri.kit.ids import parse_uuid
from cauri.kit.pagination import Page
from cauri.merchants.caller import Caller
from cauri.models import Event, lookups
from cauri.webhooks.scheduling import first_attempt
from cauri.worker import queue


def emission_after(source: str | None) -> str:
    """The CTEs of an event and, when it has somewhere to go (the payment's `callback_url`,
    else the environment's endpoint), its delivery (whose id is the event's) and the job of
    its first attempt (`job`, whose caller selects the worker's NOTIFY from it), once per row
    of `source` (cauri.kit.cte). It runs on every payment settlement, in one round trip with
    the state change it reports when the caller can (see `cauri.payments.service`). Plain SQL
    on the tables, so the ORM takes no part in it. PostgreSQL runs every data-modifying CTE to
    completion whether the last SELECT reads it or not; the job CTE is the worker's own
    (cauri.worker.queue)."""
    return (
        "new_event AS (INSERT INTO events (id, merchant_id, livemode, type, data, "  # noqa: S608
        "  callback_url, created_at) SELECT CAST(:event_id AS uuid), CAST(:event_owner AS text), "
        "  CAST(:event_env AS boolean), CAST(:event_type AS text), CAST(:event_data AS jsonb), "
        "  CAST(:event_callback AS text), CAST(:event_at AS timestamptz)"
        + cte.per_row_of(source)
        + "  RETURNING id), "  # noqa: S608
        "target AS (SELECT coalesce(CAST(:event_callback AS text), (SELECT url FROM "
        "  webhook_endpoints WHERE merchant_id = CAST(:event_owner AS text) "
        "  AND livemode = CAST(:event_env AS boolean))) AS url), "
        "delivery AS (INSERT INTO webhook_deliveries (id, event_id, merchant_id, livemode, "
        "  event, url, status, attempts, series_attempts, created_at, next_attempt_at) "
        "  SELECT new_event.id, new_event.id, CAST(:event_owner AS text), "
        "  CAST(:event_env AS boolean), CAST(:event_type AS text), target.url, 'pending', 0, 0, "
        "  CAST(:event_at AS timestamptz), CAST(:event_at AS timestamptz) "
        "  FROM new_event, target WHERE target.url IS NOT NULL RETURNING id), "
        f"{queue.insert_job('delivery')}"
    )


_EMIT = text(f"WITH {emission_after(None)} SELECT job.id, {queue.NOTIFY} FROM job").bindparams(  # noqa: S608
    bindparam("event_data", type_=Event.data.type)
)


def emission(
    *,
    event_id: uuid.UUID,
    merchant_id: str,
    livemode: bool,
    type: str,
    data: dict[str, Any],
    at: datetime,
    callback_url: str | None = None,
) -> dict[str, Any]:
    """The parameters of `emission_after`; `event_data` is JSONB (bind it so typed). `type`
    must be declared in cauri.events.types (a ValueError otherwise)."""
    return {
        "event_id": event_id,
        "event_owner": merchant_id,
        "event_env": livemode,
        "event_type": declared(type),
        "event_data": data,
        "event_callback": callback_url,
        "event_at": at,
        **first_attempt(delivery_id=event_id, merchant_id=merchant_id, livemode=livemode, now=at),
    }


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
        emission(
            event_id=event_id,
            merchant_id=merchant_id,
            livemode=livemode,
            type=type,
            data=data,
            at=at,
            callback_url=callback_url,
        ),
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


_MISSING = "Événement introuvable."


async def get(session: AsyncSession, caller: Caller, event_id: str) -> Event:
    as_uuid = parse_uuid(event_id)
    if as_uuid is None:
        raise NotFound(_MISSING)
    return await lookups.one_of_yours(session, caller, Event, Event.id == as_uuid, missing=_MISSING)


async def list_events(
    session: AsyncSession, caller: Caller, page: Page, type: str | None
) -> tuple[Sequence[Event], int]:
    kept = [] if type is None else [Event.type == type]
    return await lookups.newest_of_yours(session, caller, Event, Event.id, page, *kept)
