"""Events are written in the transaction of the state change they report (the outbox),
together with their webhook delivery and the job that makes its first attempt."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    DateTime,
    String,
    Table,
    bindparam,
    func,
    insert,
    literal,
    select,
)
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import NotFound
from cauri.kit.ids import parse_uuid
from cauri.kit.pagination import Page, paginate
from cauri.merchants.auth import Caller
from cauri.models import Event, WebhookDelivery, WebhookEndpoint
from cauri.webhooks.scheduling import enqueue_attempt

# One round trip for the event and, when it has somewhere to go (the payment's `callback_url`,
# else the environment's endpoint), its delivery: it runs on every payment settlement. Built
# once, so its cache key is computed once; on the tables, not the mapped classes, which the
# ORM would copy on every execution (and take for a bulk INSERT of the parameters). No
# parameter is named like a column: an INSERT takes such a parameter as that column's value.
_EVENTS = cast(Table, Event.__table__)
_DELIVERIES = cast(Table, WebhookDelivery.__table__)
_ENDPOINTS = cast(Table, WebhookEndpoint.__table__)
_NEW_EVENT = (
    insert(_EVENTS)
    .values(
        id=bindparam("new_id"),
        merchant_id=bindparam("owner"),
        livemode=bindparam("env"),
        type=bindparam("kind"),
        data=bindparam("payload", type_=Event.data.type),
        callback_url=bindparam("callback", type_=String),
        created_at=bindparam("at"),
    )
    .returning(_EVENTS.c.id)
    .cte("new_event")
)
_TARGET = func.coalesce(
    bindparam("callback", type_=String),
    select(_ENDPOINTS.c.url)
    .where(
        _ENDPOINTS.c.merchant_id == bindparam("owner"), _ENDPOINTS.c.livemode == bindparam("env")
    )
    .scalar_subquery(),
)
_EMIT = (
    insert(_DELIVERIES)
    .from_select(
        [
            "id",
            "event_id",
            "merchant_id",
            "livemode",
            "event",
            "url",
            "status",
            "attempts",
            "series_attempts",
            "created_at",
            "next_attempt_at",
        ],
        select(
            _NEW_EVENT.c.id,
            _NEW_EVENT.c.id,
            bindparam("owner", type_=String),
            bindparam("env", type_=Boolean),
            bindparam("kind", type_=String),
            _TARGET,
            literal("pending", String),
            literal(0),
            literal(0),
            bindparam("at", type_=DateTime(timezone=True)),
            bindparam("at", type_=DateTime(timezone=True)),
        ).where(_TARGET.is_not(None)),
    )
    .returning(_DELIVERIES.c.id)
    .add_cte(_NEW_EVENT)
)


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
    delivered = (
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
            },
        )
    ).scalar_one_or_none()
    if delivered is not None:
        await enqueue_attempt(
            session,
            delivery_id=delivered,
            attempt=1,
            merchant_id=merchant_id,
            livemode=livemode,
            now=at,
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
