"""Webhook deliveries as the support staff see them: the failing endpoints (the overview's
figure), the deliveries that gave up or whose attempts so far failed, newest first, and
one delivery with its attempts. Read-only: resending is cauri.staff.actions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import NotFound
from cauri.kit.ids import parse_uuid
from cauri.kit.pagination import Page, paginate
from cauri.models import WebhookAttempt, WebhookDelivery
from cauri.staff.details import Delivered
from cauri.webhooks.failing import FAILING_WINDOW, FailingEndpoint
from cauri.webhooks.failing import failing_endpoints as _endpoints


async def failing_endpoints(session: AsyncSession, now: datetime) -> list[FailingEndpoint]:
    return await _endpoints(session, now)


async def failing(
    session: AsyncSession, now: datetime, page: Page, merchant_id: str | None = None
) -> tuple[Sequence[WebhookDelivery], int]:
    """The deliveries of the overview's window that gave up or are retrying after failed
    attempts, newest first; one merchant's if `merchant_id`."""
    conditions = [
        WebhookDelivery.created_at >= now - FAILING_WINDOW,
        or_(
            WebhookDelivery.status == "failed",
            and_(WebhookDelivery.status == "pending", WebhookDelivery.attempts > 0),
        ),
    ]
    if merchant_id is not None:
        conditions.append(WebhookDelivery.merchant_id == merchant_id)
    order = (WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
    return await paginate(session, WebhookDelivery, conditions, order, page)


async def delivery(session: AsyncSession, delivery_id: str) -> Delivered:
    key = parse_uuid(delivery_id)
    found = None if key is None else await session.get(WebhookDelivery, key)
    if found is None:
        raise NotFound(f"Livraison introuvable : {delivery_id}.")
    attempts = await session.scalars(
        select(WebhookAttempt)
        .where(WebhookAttempt.delivery_id == found.id)
        .order_by(WebhookAttempt.number)
    )
    return Delivered(found, attempts.all())
