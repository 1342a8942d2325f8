"""Events are written in the transaction of the state change they report (the outbox),
together with their webhook delivery and the job that makes its first attempt."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    CTE,
    Boolean,
    DateTime,
    FromClause,
    Table,
    Text,
    Uuid,
    func,
    insert,
    literal_column,
    select,
    true,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import TypeEngine

from cauri.events.types import declared
from cauri.kit.binds import Binds, inserted
from cauri.kit.errors import NotFound
from cauri.kit.ids import parse_uuid
from cauri.kit.pagination import Page
from cauri.merchants.caller import Caller
from cauri.models import Event, WebhookDelivery, WebhookEndpoint, lookups
from cauri.webhooks.scheduling import first_attempt
from cauri.worker import queue

_EVENTS = cast(Table, Event.__table__)
_ENDPOINTS = cast(Table, WebhookEndpoint.__table__)
_DELIVERIES = cast(Table, WebhookDelivery.__table__)


@dataclass(frozen=True)
class Emission:
    """An event as `emitted` writes it; its delivery's id is the event's."""

    event_id: uuid.UUID
    merchant_id: str
    livemode: bool
    type: str
    data: dict[str, Any]
    at: datetime
    callback_url: str | None = None

    def __post_init__(self) -> None:
        declared(self.type)  # an undeclared type is refused (cauri.events.types)


@dataclass(frozen=True)
class Emitted:
    """The CTEs of an event (`event`), its delivery (`delivery`) and the job of its first
    attempt (`job`), in another domain's statement."""

    event: CTE
    delivery: CTE
    queued: queue.Queued
    binds: Binds[Emission]

    @property
    def job(self) -> CTE:
        return self.queued.cte

    def values(self, emission: Emission) -> dict[str, Any]:
        attempt = first_attempt(
            delivery_id=emission.event_id,
            merchant_id=emission.merchant_id,
            livemode=emission.livemode,
            now=emission.at,
        )
        return self.binds.values(emission) | self.queued.values(attempt)


def emitted(source: FromClause | None) -> Emitted:
    """An event and, when it has somewhere to go (the payment's `callback_url`, else the
    environment's endpoint), its delivery and the job of its first attempt (the caller wakes
    the worker with `queue.woken_by(job)`), once per row of `source`, a FROM item of the
    caller's statement (None: once; a `source` without rows: nothing). It runs on every
    payment settlement, in one round trip with the state change it reports when the caller
    can (see `cauri.payments.service`). Core on the tables, so the ORM takes no part in it.
    PostgreSQL runs every data-modifying CTE to completion whether the last SELECT reads it
    or not."""
    binds = Binds(
        Emission,
        event_id=Uuid(),
        merchant_id=Text(),
        livemode=Boolean(),
        type=Text(),
        data=cast(TypeEngine[Any], Event.data.type),
        at=DateTime(timezone=True),
        callback_url=Text(),
    )
    row = {
        "id": binds["event_id"],
        "merchant_id": binds["merchant_id"],
        "livemode": binds["livemode"],
        "type": binds["type"],
        "data": binds["data"],
        "callback_url": binds["callback_url"],
        "created_at": binds["at"],
    }
    event = inserted(_EVENTS, row, source)
    endpoint = (
        select(_ENDPOINTS.c.url)
        .where(
            _ENDPOINTS.c.merchant_id == binds["merchant_id"],
            _ENDPOINTS.c.livemode == binds["livemode"],
        )
        .scalar_subquery()
    )
    target = select(func.coalesce(binds["callback_url"], endpoint).label("url")).cte()
    delivered = (
        select(
            event.c.id,
            event.c.id.label("event_id"),
            binds["merchant_id"],
            binds["livemode"],
            binds["type"],
            target.c.url,
            literal_column("'pending'"),
            literal_column("0"),
            literal_column("0"),
            binds["at"],
            binds["at"],
        )
        .join_from(event, target, true())
        .where(target.c.url.is_not(None))
    )
    delivery = (
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
            delivered,
        )
        .returning(_DELIVERIES.c.id)
        .cte()
    )
    return Emitted(event, delivery, queue.queued(delivery), binds)


_EMITTED = emitted(None)
_EMIT = select(_EMITTED.job.c.id, queue.NOTIFY)


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
        _EMITTED.values(
            Emission(
                event_id=event_id,
                merchant_id=merchant_id,
                livemode=livemode,
                type=type,
                data=data,
                at=at,
                callback_url=callback_url,
            )
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
