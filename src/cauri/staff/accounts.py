"""Staff accounts: created by the CLI (`cauri staff create`), with a one-time sign-in link or a
password; listed; disabled (its sessions die at once); given a new link after a lost password
or device (which also resets the TOTP enrollment)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit import strict_json
from cauri.kit.errors import Conflict, InvalidRequest, NotFound
from cauri.kit.ids import new_uuid
from cauri.models import StaffAccount, StaffSession, StaffSignInLink
from cauri.models.staff import STAFF_ROLES
from cauri.staff import passwords, roles, tokens

LINK_LIFETIME = timedelta(hours=24)

# One @, something on each side, a dot in the domain, no space: what a mailbox address needs
# to be told apart from a typo; deliverability is not this service's to check.
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_EMAIL_MAX = 254


@dataclass(frozen=True)
class IssuedLink:
    account: StaffAccount
    token: str
    expires_at: datetime


def normalized_email(email: str) -> str:
    """The address as stored: trimmed, lower-case. Refuses what is no address."""
    cleaned = email.strip().lower()
    if (
        len(cleaned) > _EMAIL_MAX
        or strict_json.unstorable(cleaned)
        or _EMAIL.fullmatch(cleaned) is None
    ):
        raise InvalidRequest.field("email", "L'adresse e-mail est invalide.")
    return cleaned


def checked_role(role: str) -> str:
    if role not in STAFF_ROLES:
        raise InvalidRequest.field(
            "role", f"Rôle inconnu : {role} (admin, finance, support ou viewer)."
        )
    return role


def account_row(account: StaffAccount) -> dict[str, Any]:
    """What may be shown of an account (the CLI's list, the audit log): never its password
    hash nor its TOTP secret."""
    return {
        "id": str(account.id),
        "email": account.email,
        "role": account.role,
        "password_set": account.password_hash is not None,
        "totp_enabled": account.totp_enabled_at is not None,
        "created_at": account.created_at.isoformat(),
        "last_sign_in_at": account.last_sign_in_at and account.last_sign_in_at.isoformat(),
        "disabled_at": account.disabled_at and account.disabled_at.isoformat(),
    }


async def find(session: AsyncSession, email: str) -> StaffAccount | None:
    """The account of `email` (any case), disabled or not; None for no account or no address."""
    try:
        cleaned = normalized_email(email)
    except InvalidRequest:
        return None
    found: StaffAccount | None = await session.scalar(
        select(StaffAccount).where(StaffAccount.email == cleaned)
    )
    return found


async def get(session: AsyncSession, email: str, *, lock: bool = False) -> StaffAccount:
    statement = select(StaffAccount).where(StaffAccount.email == normalized_email(email))
    account = await session.scalar(statement.with_for_update() if lock else statement)
    if account is None:
        raise NotFound(f"Aucun compte du personnel n'a l'adresse {email.strip()}.")
    return account


async def create(session: AsyncSession, *, email: str, role: str, now: datetime) -> StaffAccount:
    cleaned = normalized_email(email)
    checked_role(role)
    if await find(session, cleaned) is not None:
        raise Conflict(f"Un compte du personnel a déjà l'adresse {cleaned}.")
    account = StaffAccount(id=new_uuid(), email=cleaned, role=role, created_at=now)
    session.add(account)
    await session.flush()
    return account


async def list_accounts(session: AsyncSession) -> Sequence[StaffAccount]:
    """Every account, oldest first."""
    statement = select(StaffAccount).order_by(StaffAccount.created_at, StaffAccount.email)
    return (await session.scalars(statement)).all()


async def set_password(session: AsyncSession, account: StaffAccount, password: str) -> None:
    passwords.check_new(password)
    account.password_hash = await passwords.hash_password(password)
    await session.flush()


async def revoke_sessions(session: AsyncSession, account: StaffAccount, now: datetime) -> None:
    await session.execute(
        update(StaffSession)
        .where(StaffSession.account_id == account.id, StaffSession.revoked_at.is_(None))
        .values(revoked_at=now)
    )


async def _drop_unused_links(session: AsyncSession, account: StaffAccount) -> None:
    await session.execute(
        delete(StaffSignInLink).where(
            StaffSignInLink.account_id == account.id, StaffSignInLink.used_at.is_(None)
        )
    )


async def disable(session: AsyncSession, email: str, now: datetime) -> StaffAccount:
    """Refuses the account's sign-in from now on and ends its sessions, on every server
    (each request reads its session from the database). Disabling twice changes nothing."""
    account = await get(session, email, lock=True)
    if account.disabled_at is None:
        account.disabled_at = now
    await revoke_sessions(session, account, now)
    await _drop_unused_links(session, account)
    await session.flush()
    return account


async def issue_link(session: AsyncSession, email: str, now: datetime) -> IssuedLink:
    """A new one-time link to set a password, valid LINK_LIFETIME; earlier unused links of
    the account stop working. The TOTP enrollment starts over (a lost device is a reason to
    ask for a link), and the account's sessions end: whoever holds the link, and only them,
    sets the account up anew."""
    account = await get(session, email, lock=True)
    if account.disabled_at is not None:
        raise Conflict(f"Le compte {account.email} est désactivé.")
    await _drop_unused_links(session, account)
    account.totp_secret = None
    account.totp_enabled_at = None
    account.totp_last_step = None
    await revoke_sessions(session, account, now)
    token = tokens.new_token()
    expires_at = now + LINK_LIFETIME
    session.add(
        StaffSignInLink(
            token_hash=tokens.digest(token),
            account_id=account.id,
            created_at=now,
            expires_at=expires_at,
        )
    )
    await session.flush()
    return IssuedLink(account, token, expires_at)


async def redeem_link(
    session: AsyncSession, token: str, now: datetime, *, use: bool = False
) -> StaffAccount:
    """The account a valid link (unused, unexpired, of an enabled account) is for; with
    `use`, the link is spent (locked first: two tabs posting it at once spend it once)."""
    statement = select(StaffSignInLink).where(StaffSignInLink.token_hash == tokens.digest(token))
    link = await session.scalar(statement.with_for_update() if use else statement)
    account = None if link is None else await session.get(StaffAccount, link.account_id)
    if (
        link is None
        or account is None
        or link.used_at is not None
        or link.expires_at <= now
        or account.disabled_at is not None
    ):
        raise NotFound(
            "Ce lien de connexion n'est plus valable (déjà utilisé, expiré ou remplacé) : "
            "demandez-en un nouveau à un administrateur (`cauri staff link EMAIL`)."
        )
    if use:
        link.used_at = now
        await session.flush()
    return account


def needs_enrollment(account: StaffAccount) -> bool:
    return roles.requires_totp(account.role) and account.totp_enabled_at is None
