"""The developers' page of each environment: the API keys (by their hint; a new one shown
once), made, rotated with a grace period and revoked through the staff's own audited
actions, with the member as actor. Test keys are the developers' and owners'; live keys the
owners' alone, and none while the merchant is not active."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.dashboard.acting import actor, caller
from cauri.dashboard.auth import SignedIn, check, checked_csrf, require
from cauri.dashboard.rendering import DashboardRoute, render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, InvalidRequest, NotFound
from cauri.merchants.keys import GRACES
from cauri.models import ApiKey
from cauri.signin.forms import posted
from cauri.staff import actions
from cauri.team.roles import Permission, allows

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Developer = Annotated[SignedIn, Depends(require(Permission.DEVELOP))]
CSRF = [Depends(checked_csrf)]


def _keys_permission(livemode: bool) -> Permission:
    return Permission.LIVE_KEYS if livemode else Permission.DEVELOP


async def _keys(session: AsyncSession, merchant_id: str, livemode: bool) -> list[ApiKey]:
    statement = (
        select(ApiKey)
        .where(ApiKey.merchant_id == merchant_id, ApiKey.livemode == livemode)
        .order_by(ApiKey.id.desc())
    )
    return list((await session.scalars(statement)).all())


async def _page(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    livemode: bool,
    *,
    refusal: CauriError | None = None,
    new_key: str | None = None,
) -> Response:
    context = {
        "livemode": livemode,
        "keys": await _keys(session, member.merchant_id, livemode),
        "may_manage_keys": allows(member.role, _keys_permission(livemode)),
        "graces": GRACES,
        "refusal": refusal,
        "new_key": new_key,
    }
    status = refusal.http_status if refusal else 200
    return render(request, "dashboard/developers.html", context, status)


async def _key_action(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    livemode: bool,
    change: Callable[[], Awaitable[str | ApiKey]],
) -> Response:
    """A key action: refused for a role without the environment's keys (403 page), else its
    outcome on the page (a new key shown once, or the refusal saying why)."""
    check(member, _keys_permission(livemode))
    outcome = await attempt(session, change)
    if isinstance(outcome, CauriError):
        return await _page(request, member, session, livemode, refusal=outcome)
    new_key = outcome if isinstance(outcome, str) else None
    return await _page(request, member, session, livemode, new_key=new_key)


def _register(mode_path: str, livemode: bool) -> None:
    path = mode_path + "/developers"

    @router.get(path)
    async def developers(request: Request, member: Developer, session: SessionDep) -> Response:
        return await _page(request, member, session, livemode)

    @router.post(path + "/keys", dependencies=CSRF)
    async def create_key(
        request: Request, member: Developer, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        async def create() -> str:
            merchant = (await caller(session, member, livemode)).merchant_id
            return await actions.create_key(
                session, runtime, actor(member), merchant, livemode=livemode, expires_at=None
            )

        return await _key_action(request, member, session, livemode, create)

    @router.post(path + "/keys/rotate", dependencies=CSRF)
    async def rotate_keys(
        request: Request, member: Developer, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        grace = (await posted(request)).get("grace", "")

        async def rotate() -> str:
            if grace not in GRACES:
                raise InvalidRequest.field("grace", f"Délai inconnu : {grace}.")
            merchant = (await caller(session, member, livemode)).merchant_id
            return await actions.rotate_keys(
                session, runtime, actor(member), merchant, livemode=livemode, grace=GRACES[grace][1]
            )

        return await _key_action(request, member, session, livemode, rotate)

    @router.post(path + "/keys/{key_id}/revoke", dependencies=CSRF)
    async def revoke_key(
        request: Request, member: Developer, session: SessionDep, runtime: RuntimeDep, key_id: str
    ) -> Response:
        owned = {str(key.id) for key in await _keys(session, member.merchant_id, livemode)}
        if key_id not in owned:  # another merchant's, or the other environment's
            raise NotFound(f"Clé introuvable : {key_id}.")

        async def revoke() -> ApiKey:
            return await actions.revoke_key(session, runtime, actor(member), key_id)

        return await _key_action(request, member, session, livemode, revoke)


for _mode_path, _livemode in (("", True), ("/test", False)):
    _register(_mode_path, _livemode)
