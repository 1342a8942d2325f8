"""Webhook endpoints failing: deliveries of the last `FAILING_WINDOW` that gave up or whose
attempts so far failed, per merchant, environment and address, with the endpoint's circuit
breaker (the staff's overview, a merchant's dashboard)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.models import WebhookDelivery, WebhookEndpoint

FAILING_WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class FailingEndpoint:
    merchant_id: str
    livemode: bool
    url: str
    exhausted: int  # deliveries that gave up (`failed`)
    retrying: int  # pending, their attempts so far failed
    last_created_at: datetime
    breaker_open_until: datetime | None  # the endpoint's circuit breaker, while open


async def failing_endpoints(
    session: AsyncSession, now: datetime, merchant_id: str | None = None, most: int = 50
) -> list[FailingEndpoint]:
    """The endpoints failing in the last `FAILING_WINDOW`, every merchant's (the staff's
    overview) or one's (its dashboard's home), the most failures first, at most `most`."""
    exhausted = WebhookDelivery.status == "failed"
    retrying = and_(WebhookDelivery.status == "pending", WebhookDelivery.attempts > 0)
    breaker = case(
        (
            and_(WebhookEndpoint.url == WebhookDelivery.url, WebhookEndpoint.open_until > now),
            WebhookEndpoint.open_until,
        )
    )
    rows = await session.execute(
        select(
            WebhookDelivery.merchant_id,
            WebhookDelivery.livemode,
            WebhookDelivery.url,
            func.count().filter(exhausted),
            func.count().filter(retrying),
            func.max(WebhookDelivery.created_at),
            func.max(breaker),
        )
        .outerjoin(
            WebhookEndpoint,
            and_(
                WebhookEndpoint.merchant_id == WebhookDelivery.merchant_id,
                WebhookEndpoint.livemode == WebhookDelivery.livemode,
            ),
        )
        .where(
            WebhookDelivery.created_at >= now - FAILING_WINDOW,
            or_(exhausted, retrying),
            *([] if merchant_id is None else [WebhookDelivery.merchant_id == merchant_id]),
        )
        .group_by(WebhookDelivery.merchant_id, WebhookDelivery.livemode, WebhookDelivery.url)
        .order_by(
            func.count().filter(exhausted).desc(),
            func.count().filter(retrying).desc(),
            WebhookDelivery.merchant_id,
        )
        .limit(most)
    )
    return [FailingEndpoint(*row) for row in rows]
