"""The circuit breaker of a webhook endpoint (a merchant's environment: its configured URL
and the `callback_url` of its payments), kept on its `webhook_endpoints` row.

What it does to the spec's schedule (up to 5 attempts, at 0, 10 s, 1 min, 5 min, 30 min):

- Closed (fewer than CAURI_WEBHOOK_BREAKER_THRESHOLD failed attempts in a row, default 10):
  every attempt goes out on schedule.
- Open: the failure that reaches the threshold opens it for CAURI_WEBHOOK_BREAKER_COOLDOWN
  (default 60 s). An attempt that falls due while it is open is postponed to the end of the
  open period: it is neither made nor counted, the delivery stays `pending` with its
  `next_attempt_at` moved. So every delivery still gets all its attempts; the delays between
  them only grow, by at most the time the breaker stays open; the breaker never fails one.
- Half-open: the first attempt due after the open period is the probe. It takes the circuit
  for CAURI_WEBHOOK_TIMEOUT + 1 s; attempts due meanwhile are postponed to the end of that.
  The probe's failure opens the breaker again for the cooldown.
- Any successful attempt closes it (the count of failures in a row goes back to 0).

Attempts already under way when it opens finish normally; the per-endpoint concurrency cap
bounds how many there are.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    DateTime,
    FromClause,
    Integer,
    Table,
    Text,
    case,
    exists,
    not_,
    null,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cauri.config import Settings
from cauri.kit.binds import Binds, Part
from cauri.models import WebhookEndpoint


@dataclass(frozen=True)
class Circuit:
    """An endpoint's breaker as read before an attempt."""

    merchant_id: str
    livemode: bool
    consecutive_failures: int
    open_until: datetime | None


def _this(circuit: Circuit) -> Any:
    return (WebhookEndpoint.merchant_id == circuit.merchant_id) & (
        WebhookEndpoint.livemode == circuit.livemode
    )


async def admit(
    sessionmaker: async_sessionmaker[AsyncSession],
    circuit: Circuit,
    *,
    now: datetime,
    settings: Settings,
) -> datetime | None:
    """None when the attempt may go now; else the time it is postponed to."""
    if circuit.consecutive_failures < settings.webhook_breaker_threshold:
        return None
    if circuit.open_until is not None and circuit.open_until > now:
        return circuit.open_until
    # Half-open: the first to move open_until past now is the probe. The others, re-checking
    # the row once its lock is released, find it moved and are postponed to it.
    probe_until = now + timedelta(seconds=settings.webhook_timeout + 1)
    passed = WebhookEndpoint.open_until.is_(None) | (WebhookEndpoint.open_until <= now)
    take_probe = (
        update(WebhookEndpoint)
        .where(_this(circuit), passed)
        .values(open_until=probe_until)
        .returning(WebhookEndpoint.open_until)
    )
    async with sessionmaker() as session, session.begin():
        if (await session.execute(take_probe)).first() is not None:
            return None
        reopened: datetime | None = await session.scalar(
            select(WebhookEndpoint.open_until).where(_this(circuit))
        )
    return reopened or probe_until


_ENDPOINTS = cast(Table, WebhookEndpoint.__table__)


@dataclass(frozen=True)
class Outcome:
    """An attempt's outcome as `counted` counts it (`outcome`)."""

    succeeded: bool
    threshold: int
    reopen_at: datetime
    merchant_id: str
    livemode: bool


# The CTE that counts an attempt's outcome on its endpoint's circuit.
Counted = Part[Outcome]


def counted(attempt: FromClause) -> Counted:
    """Counts an attempt's outcome in the statement that records the attempt
    (cauri.webhooks.service), once a row of `attempt` says the attempt was recorded. A
    success on a closed circuit writes nothing: no row is locked per delivery."""
    binds = Binds(
        Outcome,
        succeeded=Boolean(),
        threshold=Integer(),
        reopen_at=DateTime(timezone=True),
        merchant_id=Text(),
        livemode=Boolean(),
    )
    failures = _ENDPOINTS.c.consecutive_failures
    open_until = _ENDPOINTS.c.open_until
    succeeded = binds["succeeded"]
    circuit = (
        update(_ENDPOINTS)
        .where(
            _ENDPOINTS.c.merchant_id == binds["merchant_id"],
            _ENDPOINTS.c.livemode == binds["livemode"],
            exists().select_from(attempt),
            or_(not_(succeeded), failures > 0, open_until.is_not(None)),
        )
        .values(
            consecutive_failures=case((succeeded, 0), else_=failures + 1),
            open_until=case(
                (succeeded, null()),
                (failures + 1 >= binds["threshold"], binds["reopen_at"]),
                else_=open_until,
            ),
        )
        .cte()
    )
    return Part(circuit, binds)


def outcome(circuit: Circuit, *, succeeded: bool, now: datetime, settings: Settings) -> Outcome:
    """The values of `counted`."""
    return Outcome(
        succeeded=succeeded,
        threshold=settings.webhook_breaker_threshold,
        reopen_at=now + timedelta(seconds=settings.webhook_breaker_cooldown),
        merchant_id=circuit.merchant_id,
        livemode=circuit.livemode,
    )
