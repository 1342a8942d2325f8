"""Events are written in the transaction of the state change they report (the outbox)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.models import Event


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
    event_id = uuid.uuid4()
    await session.execute(
        insert(Event).values(
            id=event_id,
            merchant_id=merchant_id,
            livemode=livemode,
            type=type,
            data=data,
            callback_url=callback_url,
            created_at=at,
        )
    )
    return event_id
