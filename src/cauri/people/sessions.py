"""Sessions of people signed in (the console's, the dashboard's), kept in the database so
that every server process sees the same ones and a revocation (sign-out, a disabled account,
a new link) takes effect at once.

The cookie holds a random token; the table holds its SHA-256 only, so a read of the table
gives no usable cookie. A session dies after `CAURI_CONSOLE_IDLE_MINUTES` without a request
and after `CAURI_CONSOLE_SESSION_HOURS` whatever happens. A session still owing its second
factor (`pending`) lives PENDING_LIFETIME at most. Moving past a step (the code given) makes
a new session with a new token: a token seen before the step is worth nothing after it.
Sessions that ended (expired, hence revoked or idle long before) more than KEPT_FOR ago
are deleted when a new one opens: who was signed in when stays readable for a month.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.config import Settings
from cauri.models import User, UserSession
from cauri.people import tokens
from cauri.people.realm import Realm

PENDING_LIFETIME = timedelta(minutes=10)
KEPT_FOR = timedelta(days=30)


@dataclass(frozen=True)
class Opened:
    """A session just made, and the token its cookie carries (shown nowhere else)."""

    session: UserSession
    token: str


@dataclass(frozen=True)
class Current:
    session: UserSession
    account: User


def lifetime(settings: Settings) -> timedelta:
    return timedelta(hours=settings.console_session_hours)


async def open_session(
    session: AsyncSession,
    account: User,
    *,
    pending: str | None,
    ip: str,
    now: datetime,
    settings: Settings,
) -> Opened:
    token = tokens.new_token()
    row = UserSession(
        token_hash=tokens.digest(token),
        account_id=account.id,
        pending=pending,
        csrf_token=secrets.token_urlsafe(32),
        ip=ip,
        created_at=now,
        last_seen_at=now,
        expires_at=now + (PENDING_LIFETIME if pending else lifetime(settings)),
    )
    session.add(row)
    await session.execute(delete(UserSession).where(UserSession.expires_at < now - KEPT_FOR))
    await session.flush()
    return Opened(row, token)


async def find(
    session: AsyncSession, realm: Realm, token: str | None, now: datetime, settings: Settings
) -> Current | None:
    """The live session of a cookie's token, seen now (its idle clock starts again); None
    for no token, an unknown, revoked, idle or expired session, a disabled account, or an
    account of another realm."""
    if not token:
        return None
    found = (
        await session.execute(
            select(UserSession, User)
            .join(User, User.id == UserSession.account_id)
            .where(UserSession.token_hash == tokens.digest(token), User.realm == realm.name)
        )
    ).one_or_none()
    if found is None:
        return None
    row, account = found
    idle = timedelta(minutes=settings.console_idle_minutes)
    if (
        row.revoked_at is not None
        or row.expires_at <= now
        or row.last_seen_at + idle <= now
        or account.disabled_at is not None
    ):
        return None
    row.last_seen_at = now
    await session.flush()
    return Current(row, account)


async def revoke(session: AsyncSession, row: UserSession, now: datetime) -> None:
    row.revoked_at = now
    await session.flush()


async def advance(
    session: AsyncSession,
    current: Current,
    *,
    pending: str | None,
    ip: str,
    now: datetime,
    settings: Settings,
) -> Opened:
    """The session after a step: the old one revoked, a new one (new token) in its place."""
    await revoke(session, current.session, now)
    return await open_session(
        session, current.account, pending=pending, ip=ip, now=now, settings=settings
    )
