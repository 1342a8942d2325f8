"""Accounts of people who sign in, in one realm: staff created by the CLI (`cauri staff
create`), merchants' team members invited (`cauri merchants invite`, the dashboard's team
page); with a one-time sign-in link or a password; listed; disabled (its sessions die at
once); given a new link after a lost password or device (which also resets the TOTP
enrollment)."""

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
from cauri.models import SignInLink, User, UserSession
from cauri.people import passwords, tokens
from cauri.people.realm import MERCHANT, Realm, of

LINK_LIFETIME = timedelta(hours=24)

# One @, something on each side, a dot in the domain, no space: what a mailbox address needs
# to be told apart from a typo; deliverability is not this service's to check.
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_EMAIL_MAX = 254


@dataclass(frozen=True)
class IssuedLink:
    account: User
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


def checked_role(realm: Realm, role: str) -> str:
    if role not in realm.roles:
        *others, last = realm.roles
        raise InvalidRequest.field(
            "role", f"Rôle inconnu : {role} ({', '.join(others)} ou {last})."
        )
    return role


def account_row(account: User) -> dict[str, Any]:
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


async def find(session: AsyncSession, realm: Realm, email: str) -> User | None:
    """The realm's account of `email` (any case), disabled or not; None for no account or no
    address."""
    try:
        cleaned = normalized_email(email)
    except InvalidRequest:
        return None
    found: User | None = await session.scalar(
        select(User).where(User.realm == realm.name, User.email == cleaned)
    )
    return found


async def get(
    session: AsyncSession,
    realm: Realm,
    email: str,
    *,
    merchant_id: str | None = None,
    lock: bool = False,
) -> User:
    """The realm's account of `email`; with `merchant_id`, only a member of that merchant's
    team (another merchant's member is as unknown as no account)."""
    statement = select(User).where(User.realm == realm.name, User.email == normalized_email(email))
    if merchant_id is not None:
        statement = statement.where(User.merchant_id == merchant_id)
    account = await session.scalar(statement.with_for_update() if lock else statement)
    if account is None:
        raise NotFound(f"Aucun compte {realm.whose} n'a l'adresse {email.strip()}.")
    return account


async def create(
    session: AsyncSession,
    realm: Realm,
    *,
    email: str,
    role: str,
    now: datetime,
    merchant_id: str | None = None,
) -> User:
    cleaned = normalized_email(email)
    checked_role(realm, role)
    if await find(session, realm, cleaned) is not None:
        raise Conflict(f"Un compte {realm.whose} a déjà l'adresse {cleaned}.")
    account = User(
        id=new_uuid(),
        realm=realm.name,
        merchant_id=merchant_id,
        email=cleaned,
        role=role,
        created_at=now,
    )
    session.add(account)
    await session.flush()
    return account


async def list_accounts(
    session: AsyncSession, realm: Realm, merchant_id: str | None = None
) -> Sequence[User]:
    """The realm's accounts (of one merchant's team, for a merchant's), oldest first."""
    statement = (
        select(User)
        .where(User.realm == realm.name, User.merchant_id == merchant_id)
        .order_by(User.created_at, User.email)
    )
    return (await session.scalars(statement)).all()


async def team_row(session: AsyncSession, merchant_id: str) -> dict[str, Any]:
    """A merchant's team as the audit log shows it: each member's address, role, and whether
    disabled."""
    members = await list_accounts(session, MERCHANT, merchant_id)
    return {
        "team": [f"{m.email} ({m.role}{', désactivé' if m.disabled_at else ''})" for m in members]
    }


async def set_password(session: AsyncSession, account: User, password: str) -> None:
    passwords.check_new(password)
    account.password_hash = await passwords.hash_password(password)
    await session.flush()


async def revoke_sessions(session: AsyncSession, account: User, now: datetime) -> None:
    await session.execute(
        update(UserSession)
        .where(UserSession.account_id == account.id, UserSession.revoked_at.is_(None))
        .values(revoked_at=now)
    )


async def _drop_unused_links(session: AsyncSession, account: User) -> None:
    await session.execute(
        delete(SignInLink).where(SignInLink.account_id == account.id, SignInLink.used_at.is_(None))
    )


async def disable(session: AsyncSession, account: User, now: datetime) -> User:
    """Refuses the account's sign-in from now on and ends its sessions, on every server
    (each request reads its session from the database). Disabling twice changes nothing."""
    await session.refresh(account, with_for_update=True)
    if account.disabled_at is None:
        account.disabled_at = now
    await revoke_sessions(session, account, now)
    await _drop_unused_links(session, account)
    await session.flush()
    return account


async def issue_link(session: AsyncSession, account: User, now: datetime) -> IssuedLink:
    """A new one-time link to set a password, valid LINK_LIFETIME; earlier unused links of
    the account stop working. The TOTP enrollment starts over (a lost device is a reason to
    ask for a link), and the account's sessions end: whoever holds the link, and only them,
    sets the account up anew."""
    await session.refresh(account, with_for_update=True)
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
        SignInLink(
            token_hash=tokens.digest(token),
            account_id=account.id,
            created_at=now,
            expires_at=expires_at,
        )
    )
    await session.flush()
    return IssuedLink(account, token, expires_at)


async def redeem_link(
    session: AsyncSession, realm: Realm, token: str, now: datetime, *, use: bool = False
) -> User:
    """The account a valid link (unused, unexpired, of an enabled account of the realm) is
    for; with `use`, the link is spent (locked first: two tabs posting it at once spend it
    once)."""
    statement = select(SignInLink).where(SignInLink.token_hash == tokens.digest(token))
    link = await session.scalar(statement.with_for_update() if use else statement)
    account = None if link is None else await session.get(User, link.account_id)
    if (
        link is None
        or account is None
        or link.used_at is not None
        or link.expires_at <= now
        or account.realm != realm.name
        or account.disabled_at is not None
    ):
        raise NotFound(
            "Ce lien de connexion n'est plus valable (déjà utilisé, expiré ou remplacé) : "
            f"demandez-en un nouveau à {realm.new_link_from}."
        )
    if use:
        link.used_at = now
        await session.flush()
    return account


def needs_enrollment(account: User) -> bool:
    return of(account.realm).requires_totp(account.role) and account.totp_enabled_at is None


async def invite_member(
    session: AsyncSession, merchant_id: str, *, email: str, role: str, now: datetime
) -> IssuedLink:
    """A new member of the merchant's team, and their first one-time link."""
    account = await create(
        session, MERCHANT, email=email, role=role, now=now, merchant_id=merchant_id
    )
    return await issue_link(session, account, now)
