"""Jobs of the payments domain."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.payments.service import CHECK_STATUS_JOB, EXPIRE_CARD_JOB, payments
from cauri.runtime import Runtime


async def check_status(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
    await payments.check_status(session, runtime, uuid.UUID(payload["payment_id"]))


async def expire_card(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
    await payments.expire_card(session, runtime, uuid.UUID(payload["payment_id"]))


HANDLERS = {CHECK_STATUS_JOB: check_status, EXPIRE_CARD_JOB: expire_card}
