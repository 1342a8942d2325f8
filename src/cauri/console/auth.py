"""Who is asking: the signed-in person of the console, and the permission a page needs
(`require`); sessions and CSRF are the door's (cauri.signin.auth)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, Request

from cauri.console.errors import lacking
from cauri.people.sessions import Current
from cauri.signin import auth
from cauri.signin.doors import CONSOLE
from cauri.staff.roles import Permission, allows


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


_opened: Any = Depends(auth.signed_in(CONSOLE))


async def signed_in(request: Request, current: Annotated[Current, _opened]) -> SignedIn:
    staff = SignedIn.of(current)
    request.state.staff = staff  # for the layout, error pages included
    return staff


Staff = Annotated[SignedIn, Depends(signed_in)]
checked_csrf = auth.checked_csrf(CONSOLE)


def require(permission: Permission) -> Callable[[SignedIn], Awaitable[SignedIn]]:
    """The dependency of a page or action that needs `permission`: the signed-in person, or
    a 403 page (a missing session: the sign-in page)."""

    async def allowed(staff: Staff) -> SignedIn:
        if not allows(staff.role, permission):
            raise lacking(staff.role, permission)
        return staff

    return allowed
