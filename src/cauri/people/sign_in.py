"""Signing in (to the console or the dashboard), step by step: a password (or a one-time
link's new password), then, for an account that has TOTP, its code, or, for a role that must
have TOTP and an account without it yet, its enrollment. Every password and code checked is
counted by the throttle; each step passed opens a new session (cauri.people.sessions)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.config import Settings
from cauri.kit.errors import CauriError, Conflict
from cauri.models import User
from cauri.people import accounts, passwords, sessions, throttle, totp
from cauri.people.realm import STAFF, Realm, of
from cauri.people.sessions import Current, Opened

TOTP = "totp"
ENROLL = "enroll"


class WrongCredentials(CauriError):
    code, http_status = "wrong_credentials", 401
    default_message = "Adresse e-mail ou mot de passe incorrect."
    keeps_writes = True  # the failed attempt, for the throttle


class WrongCode(CauriError):
    code, http_status = "wrong_code", 401
    default_message = (
        "Code incorrect ou déjà utilisé : saisissez le code que votre application affiche "
        "maintenant."
    )
    keeps_writes = True


def _next_step(account: User, settings: Settings) -> str | None:
    if account.totp_enabled_at is not None:
        return TOTP
    if accounts.needs_enrollment(account):
        if account.totp_secret is None:
            secret = totp.new_secret()
            account.totp_secret = totp.seal(settings.secret_key, account.id, secret)
        return ENROLL
    return None


async def _open(
    session: AsyncSession, account: User, ip: str, now: datetime, settings: Settings
) -> Opened:
    pending = _next_step(account, settings)
    if pending is None:
        account.last_sign_in_at = now
        await throttle.record(session, of(account.realm), account.email, ip, now, succeeded=True)
    return await sessions.open_session(
        session, account, pending=pending, ip=ip, now=now, settings=settings
    )


async def with_password(
    session: AsyncSession,
    realm: Realm,
    email: str,
    password: str,
    ip: str,
    now: datetime,
    settings: Settings,
) -> Opened:
    """The session of a right password: open, or owing its second factor."""
    await throttle.check(session, realm, email, ip, now)
    account = await accounts.find(session, realm, email)
    usable = account is not None and account.disabled_at is None
    stored = account.password_hash if account is not None and usable else None
    verdict = await passwords.verify(stored, password)
    if account is None or not usable or not verdict.valid:
        await throttle.record(session, realm, email, ip, now, succeeded=False)
        raise WrongCredentials()
    if verdict.rehashed is not None:
        account.password_hash = verdict.rehashed
    return await _open(session, account, ip, now, settings)


async def with_link(
    session: AsyncSession,
    realm: Realm,
    token: str,
    password: str,
    confirmation: str,
    ip: str,
    now: datetime,
    settings: Settings,
) -> Opened:
    """Spends a one-time link: sets the password, ends the account's other sessions, and
    opens a session (owing the TOTP enrollment if the role needs it)."""
    passwords.check_new(password, confirmation)
    account = await accounts.redeem_link(session, realm, token, now, use=True)
    account.password_hash = await passwords.hash_password(password)
    await accounts.revoke_sessions(session, account, now)
    return await _open(session, account, ip, now, settings)


async def offer_enrollment(
    session: AsyncSession, current: Current, ip: str, now: datetime, settings: Settings
) -> Opened:
    """A signed-in person whose role does not require a second factor asks for one: their
    session goes back to the enrollment step (a new secret, shown once), and from its first
    code on every sign-in asks for one. Refused when they already have it."""
    account = current.account
    if account.totp_enabled_at is not None:
        raise Conflict("La double authentification est déjà activée.")
    secret = totp.new_secret()
    account.totp_secret = totp.seal(settings.secret_key, account.id, secret)
    return await sessions.advance(
        session, current, pending=ENROLL, ip=ip, now=now, settings=settings
    )


def enrollment(account: User, settings: Settings) -> totp.Enrollment:
    """The secret being enrolled, to show (the session's step is `enroll`)."""
    assert account.totp_secret is not None  # set when the step began
    secret = totp.unseal(
        settings.secret_key, account.id, account.totp_secret, settings.previous_keys
    )
    return totp.enrollment(secret, account.email)


async def with_code(
    session: AsyncSession, current: Current, code: str, ip: str, now: datetime, settings: Settings
) -> Opened:
    """Passes the session's TOTP step (a code, or the first code of an enrollment): the
    session is replaced by an open one."""
    account = current.account
    realm = of(account.realm)
    await throttle.check(session, realm, account.email, ip, now)
    # Under the throttle's lock: a code posted twice at once is taken once.
    await session.refresh(account)
    assert account.totp_secret is not None  # a session owing a code has a secret
    secret = totp.unseal(
        settings.secret_key, account.id, account.totp_secret, settings.previous_keys
    )
    step = totp.accepted_step(secret, code, now, account.totp_last_step)
    if step is None:
        await throttle.record(session, realm, account.email, ip, now, succeeded=False)
        raise WrongCode()
    account.totp_last_step = step
    if account.totp_enabled_at is None:
        account.totp_enabled_at = now
    account.last_sign_in_at = now
    await throttle.record(session, realm, account.email, ip, now, succeeded=True)
    return await sessions.advance(session, current, pending=None, ip=ip, now=now, settings=settings)


async def named_actor(
    session: AsyncSession, email: str, code: str, now: datetime, settings: Settings
) -> User:
    """The CLI's `--as EMAIL --totp CODE`: the enabled account of that address, proven by a
    current code of its second factor (taken once, as at sign-in: a code seen over a
    shoulder is spent). Its approvals are the account's, as in the console."""
    account = await accounts.find(session, STAFF, email)
    if account is None or account.disabled_at is not None:
        raise Conflict(f"Aucun compte actif du personnel pour {email.strip().lower()}.")
    if account.totp_secret is None or account.totp_enabled_at is None:
        raise Conflict(
            f"Le compte {account.email} n'a pas de second facteur : connectez-vous une "
            "première fois à la console pour l'enregistrer."
        )
    await session.refresh(account, with_for_update=True)
    assert account.totp_secret is not None
    secret = totp.unseal(settings.secret_key, account.id, account.totp_secret)
    step = totp.accepted_step(secret, code, now, account.totp_last_step)
    if step is None:
        raise WrongCode()
    account.totp_last_step = step
    await session.flush()
    return account
