"""A day reconciled for one connector account, as finance or the daily job asks it."""

from __future__ import annotations

from dataclasses import asdict
from datetime import date, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit import log
from cauri.audit.actor import Actor
from cauri.kit.errors import NotFound
from cauri.models import ConnectorAccount
from cauri.reconciliation import matching
from cauri.reconciliation.days import Days


async def reconcile_day(
    session: AsyncSession, actor: Actor, connector: str, day: date, now: datetime, days: Days
) -> matching.Run:
    if await session.get(ConnectorAccount, connector) is None:
        raise NotFound(f"Aucun connecteur {connector}.")
    run = await matching.run(session, connector, day, now, days)
    await log.record(
        session,
        actor,
        "reconciliation.run",
        "connector",
        connector,
        None,
        asdict(run) | {"day": day.isoformat()},
        at=now,
    )
    return run
