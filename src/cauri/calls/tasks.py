"""Jobs of the call protocol: the status queries of operations still pending."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls.service import POLL_JOB, poll
from cauri.runtime import Runtime


async def poll_operation(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
    await poll(
        session,
        runtime,
        uuid.UUID(payload["operation_id"]),
        scheduled=bool(payload.get("scheduled", True)),
    )


HANDLERS = {POLL_JOB: poll_operation}
