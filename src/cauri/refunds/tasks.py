"""Jobs of the refunds domain."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.refunds.service import CHECK_STATUS_JOB, refunds
from cauri.runtime import Runtime


async def check_status(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
    await refunds.check_status(session, runtime, payload["reference"])


HANDLERS = {CHECK_STATUS_JOB: check_status}
