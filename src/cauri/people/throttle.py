"""Sign-in throttling, across every server process (the attempts are rows of the database): 5
failures per account (a realm's email), 20 per client address (across realms), within 15
minutes, then refusals until the oldest of those failures is 15 minutes old. A password and
a TOTP code count alike, so neither can be guessed faster than the other. An account's count
starts again after it signs in; an address's does not (an attacker could sign in to an
account of their own).

Attempts on one email, and from one address, are serialized by PostgreSQL advisory locks
held to the end of the transaction: parallel guesses wait for each other and are all
counted, instead of all reading the same count.

Attempts are kept KEPT_FOR (an investigation of a guessing campaign reads them), then
deleted by the next attempt recorded: the table stays the size of a month of sign-ins.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from sqlalchemy import ColumnElement, delete, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit import strict_json
from cauri.kit.errors import CauriError
from cauri.models import SignInAttempt
from cauri.people.realm import Realm

ACCOUNT_LIMIT = 5
ADDRESS_LIMIT = 20
WINDOW = timedelta(minutes=15)
KEPT_FOR = timedelta(days=30)
_KEY_LENGTH = 254


class Throttled(CauriError):
    code, http_status = "too_many_attempts", 429
    default_message = "Trop de tentatives de connexion."

    def __init__(self, retry_at: datetime, now: datetime) -> None:
        self.retry_at = retry_at
        seconds = max(1, math.ceil((retry_at - now).total_seconds()))
        minutes = math.ceil(seconds / 60)
        message = (
            f"Trop de tentatives de connexion : réessayez dans {minutes} minute"
            f"{'s' if minutes > 1 else ''}, à {retry_at.astimezone(UTC):%H:%M} UTC."
        )
        super().__init__(message, headers={"Retry-After": str(seconds)})


def attempt_key(email: str) -> str:
    """The email as typed, as the attempts are counted (and stored) under it."""
    key = email.strip().lower()[:_KEY_LENGTH]
    return "" if strict_json.unstorable(key) else key


async def _lock(session: AsyncSession, name: str) -> None:
    await session.execute(
        text("SELECT pg_advisory_xact_lock(hashtextextended(:name, 0))"), {"name": name}
    )


async def _refused_until(
    session: AsyncSession, keyed: ColumnElement[bool], since: datetime, limit: int
) -> datetime | None:
    """When the limit-th latest failure since `since` leaves the window, if there is one."""
    counted = await session.scalar(
        select(SignInAttempt.at)
        .where(keyed, SignInAttempt.at > since, SignInAttempt.succeeded.is_(False))
        .order_by(SignInAttempt.at.desc())
        .offset(limit - 1)
        .limit(1)
    )
    return None if counted is None else counted + WINDOW


async def check(session: AsyncSession, realm: Realm, email: str, ip: str, now: datetime) -> None:
    """Raises Throttled while the account or the address has used its attempts. Locks both
    until the transaction ends: call it before checking the password or code."""
    key = attempt_key(email)
    await _lock(session, f"{realm.name}-sign-in:email:{key}")
    await _lock(session, f"sign-in:ip:{ip}")
    of_account = (SignInAttempt.realm == realm.name) & (SignInAttempt.email == key)
    since = now - WINDOW
    last_success = await session.scalar(
        select(func.max(SignInAttempt.at)).where(of_account, SignInAttempt.succeeded)
    )
    account_since = max(since, last_success) if last_success else since
    refusals = [
        until
        for until in (
            await _refused_until(session, of_account, account_since, ACCOUNT_LIMIT),
            await _refused_until(session, SignInAttempt.ip == ip, since, ADDRESS_LIMIT),
        )
        if until is not None
    ]
    if refusals:
        raise Throttled(max(refusals), now)


async def record(
    session: AsyncSession, realm: Realm, email: str, ip: str, now: datetime, *, succeeded: bool
) -> None:
    session.add(
        SignInAttempt(
            realm=realm.name, email=attempt_key(email), ip=ip, at=now, succeeded=succeeded
        )
    )
    await session.execute(delete(SignInAttempt).where(SignInAttempt.at < now - KEPT_FOR))
    await session.flush()
