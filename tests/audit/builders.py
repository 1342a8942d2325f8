"""Reading the audit log back in tests."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from cauri.audit.log import entry_row
from cauri.models import AuditEntry
from cauri.runtime import Runtime


async def entries(runtime: Runtime) -> list[dict[str, Any]]:
    """Every entry, oldest first, as `cauri audit list --json` shows each."""
    async with runtime.sessionmaker() as session:
        found = await session.scalars(select(AuditEntry).order_by(AuditEntry.id))
        return [entry_row(entry) for entry in found]
