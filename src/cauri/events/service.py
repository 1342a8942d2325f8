"""Events are written in the transaction of the state change they report (the outbox),
together with their webhook delivery and the job that makes its first attempt."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import String, func, insert, literal, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import NotFound
from cauri.kit.pagination import Page, paginate
from cauri.merchants.auth import Caller
from cauri.models import Event, WebhookDelivery, WebhookEndpoint
from cauri.webhooks import DELIVER_JOB
from cauri.worker import queue


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
    new_event = (
        insert(Event)
        .values(
            id=event_id,
            merchant_id=merchant_id,
            livemode=livemode,
            type=type,
            data=data,
            callback_url=callback_url,
            created_at=at,
        )
        .returning(Event.id)
        .cte("new_event")
    )
    endpoint_url = (
        select(WebhookEndpoint.url)
        .where(WebhookEndpoint.merchant_id == merchant_id, WebhookEndpoint.livemode == livemode)
        .scalar_subquery()
    )
    target = func.coalesce(literal(callback_url, String), endpoint_url)
    # One round trip for the event and its delivery: this runs on every payment settlement.
    delivery = (
        insert(WebhookDelivery)
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
                new_event.c.id,
                new_event.c.id,
                literal(merchant_id, String),
                literal(livemode),
                literal(type, String),
                target,
                literal("pending", String),
                literal(0),
                literal(0),
                literal(at),
                literal(at),
            ).where(target.is_not(None)),
        )
        .returning(WebhookDelivery.id)
        .add_cte(new_event)
    )
    delivered = (await session.execute(delivery)).scalar_one_or_none()
    if delivered is not None:
        await queue.enqueue(
            session, DELIVER_JOB, {"delivery_id": str(delivered), "attempt": 1}, now=at
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


def _as_uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


async def get(session: AsyncSession, caller: Caller, event_id: str) -> Event:
    as_uuid = _as_uuid(event_id)
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
