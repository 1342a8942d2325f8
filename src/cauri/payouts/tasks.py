"""Jobs of the payouts domain."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.payouts.service import CHECK_STATUS_JOB, SEND_APPROVED_JOB, payouts
from cauri.runtime import Runtime


async def check_status(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
    await payouts.check_status(session, runtime, payload["reference"])


async def send_approved(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
    await payouts.send_approved(session, runtime, payload["reference"])


HANDLERS = {CHECK_STATUS_JOB: check_status, SEND_APPROVED_JOB: send_approved}
