"""Who is asking: the session of the request's cookie, the signed-in person, the permission
a page needs (`require`), and the CSRF token every form of a session posts."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Request

from cauri.console.errors import CsrfRefused, Forbidden, SignInRequired
from cauri.console.security import CSRF_FIELD, SESSION_COOKIE
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.tokens import same
from cauri.staff import sessions
from cauri.staff.roles import Permission, allows
from cauri.staff.sessions import Current


@dataclass(frozen=True)
class SignedIn:
    """A person past every step of the sign-in, on this request. Plain values, not rows:
    they outlive the request's transaction (a refusal rolls it back, then its page shows
    them)."""

    account_id: uuid.UUID
    email: str
    role: str
    csrf_token: str
    last_sign_in_at: datetime | None
    totp_enabled: bool

    @classmethod
    def of(cls, current: Current) -> SignedIn:
        account = current.account
        return cls(
            account_id=account.id,
            email=account.email,
            role=account.role,
            csrf_token=current.session.csrf_token,
            last_sign_in_at=account.last_sign_in_at,
            totp_enabled=account.totp_enabled_at is not None,
        )


async def current_session(
    request: Request, session: SessionDep, runtime: RuntimeDep
) -> Current | None:
    """The request's live session, whatever step it is at; None without one."""
    token = request.cookies.get(SESSION_COOKIE)
    return await sessions.find(session, token, runtime.clock.now(), runtime.settings)


CurrentDep = Annotated[Current | None, Depends(current_session)]


async def signed_in(request: Request, current: CurrentDep) -> SignedIn:
    if current is None or current.session.pending is not None:
        raise SignInRequired()
    staff = SignedIn.of(current)
    request.state.staff = staff  # for the layout, error pages included
    return staff


Staff = Annotated[SignedIn, Depends(signed_in)]


def require(permission: Permission) -> Callable[[SignedIn], Awaitable[SignedIn]]:
    """The dependency of a page or action that needs `permission`: the signed-in person, or
    a 403 page (a missing session: the sign-in page)."""

    async def allowed(staff: Staff) -> SignedIn:
        if not allows(staff.role, permission):
            raise Forbidden.lacking(staff.role, permission)
        return staff

    return allowed


def pending(step: str) -> Callable[[Current | None], Awaitable[Current]]:
    """The dependency of a sign-in step's page: a session owing `step`."""

    async def owing(current: CurrentDep) -> Current:
        if current is None or current.session.pending != step:
            raise SignInRequired()
        return current

    return owing


async def checked_csrf(request: Request, current: CurrentDep) -> None:
    """Refuses (403, nothing written) a form whose token is not its session's."""
    if current is None:
        raise SignInRequired()
    sent = (await request.form()).get(CSRF_FIELD)
    if not same(sent if isinstance(sent, str) else None, current.session.csrf_token):
        raise CsrfRefused()
