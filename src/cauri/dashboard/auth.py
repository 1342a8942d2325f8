"""Who is asking: the signed-in member of a merchant's team, and the permission a page
needs (`require`); sessions and CSRF are the door's (cauri.signin.auth)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request

from cauri.people.sessions import Current
from cauri.signin import auth
from cauri.signin.doors import DASHBOARD
from cauri.signin.errors import Forbidden
from cauri.team.roles import DESCRIPTIONS_FR, ROLE_NAMES_FR, Permission, allows


@dataclass(frozen=True)
class SignedIn:
    """A member past every step of the sign-in, on this request: plain values that outlive
    the request's transaction (a refusal's page shows them)."""

    account_id: uuid.UUID
    email: str
    role: str
    merchant_id: str
    csrf_token: str
    totp_enabled: bool

    @classmethod
    def of(cls, current: Current) -> SignedIn:
        account = current.account
        assert account.merchant_id is not None  # the realm's constraint
        return cls(
            account_id=account.id,
            email=account.email,
            role=account.role,
            merchant_id=account.merchant_id,
            csrf_token=current.session.csrf_token,
            totp_enabled=account.totp_enabled_at is not None,
        )


_opened: Any = Depends(auth.signed_in(DASHBOARD))


async def signed_in(request: Request, current: Annotated[Current, _opened]) -> SignedIn:
    member = SignedIn.of(current)
    request.state.member = member  # for the layout, error pages included
    return member


Member = Annotated[SignedIn, Depends(signed_in)]
checked_csrf = auth.checked_csrf(DASHBOARD)


def check(member: SignedIn, permission: Permission) -> None:
    """Refuses (403 page) a member whose role lacks `permission`."""
    if not allows(member.role, permission):
        role = ROLE_NAMES_FR.get(member.role, member.role)
        raise Forbidden.lacking(role, DESCRIPTIONS_FR[permission])


def require(permission: Permission) -> Callable[[SignedIn], Awaitable[SignedIn]]:
    """The dependency of a page or action that needs `permission`: the signed-in member, or
    a 403 page (a missing session: the sign-in page)."""

    async def allowed(member: Member) -> SignedIn:
        check(member, permission)
        return member

    return allowed
