"""The team's page (owners): its members, a teammate invited (a one-time link the owner hands
over), a role changed, a member disabled or given a new link after a lost password or device;
each audited (cauri.team.actions). The team keeps an active owner."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.dashboard.acting import actor
from cauri.dashboard.auth import SignedIn, checked_csrf, require
from cauri.dashboard.rendering import DashboardRoute, render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError
from cauri.models.people import MERCHANT_ROLES
from cauri.people import accounts
from cauri.people.accounts import IssuedLink
from cauri.people.realm import MERCHANT
from cauri.runtime import Runtime
from cauri.signin.doors import DASHBOARD
from cauri.signin.forms import posted
from cauri.team import actions
from cauri.team.roles import Permission

PATH = "/team"
router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Owner = Annotated[SignedIn, Depends(require(Permission.MANAGE_TEAM))]
CSRF = [Depends(checked_csrf)]


async def _page(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    runtime: Runtime,
    outcome: Any = None,
    done: str | None = None,
) -> Response:
    refusal = outcome if isinstance(outcome, CauriError) else None
    issued = outcome if isinstance(outcome, IssuedLink) else None
    context = {
        "members": await accounts.list_accounts(session, MERCHANT, member.merchant_id),
        "roles": MERCHANT_ROLES,
        "refusal": refusal,
        "issued": issued,
        "link": issued and DASHBOARD.welcome_link(request, runtime.settings, issued.token),
        "done": None if refusal else done,
    }
    return render(request, "dashboard/team.html", context, refusal.http_status if refusal else 200)


async def _act(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    runtime: Runtime,
    change: Callable[[], Awaitable[Any]],
    done: str | None = None,
) -> Response:
    return await _page(request, member, session, runtime, await attempt(session, change), done)


@router.get(PATH)
async def team(
    request: Request, member: Owner, session: SessionDep, runtime: RuntimeDep
) -> Response:
    return await _page(request, member, session, runtime)


@router.post(PATH, dependencies=CSRF)
async def invite(
    request: Request, member: Owner, session: SessionDep, runtime: RuntimeDep
) -> Response:
    fields = await posted(request)
    return await _act(
        request,
        member,
        session,
        runtime,
        lambda: actions.invite(
            session,
            runtime,
            actor(member),
            member.merchant_id,
            email=fields.get("email", ""),
            role=fields.get("role", ""),
        ),
    )


@router.post(PATH + "/{account_id}/role", dependencies=CSRF)
async def set_role(
    request: Request, member: Owner, session: SessionDep, runtime: RuntimeDep, account_id: str
) -> Response:
    role = (await posted(request)).get("role", "")
    return await _act(
        request,
        member,
        session,
        runtime,
        lambda: actions.set_role(
            session, runtime, actor(member), member.merchant_id, account_id, role
        ),
        "Rôle changé : les sessions du membre sont terminées.",
    )


@router.post(PATH + "/{account_id}/disable", dependencies=CSRF)
async def disable(
    request: Request, member: Owner, session: SessionDep, runtime: RuntimeDep, account_id: str
) -> Response:
    return await _act(
        request,
        member,
        session,
        runtime,
        lambda: actions.disable(session, runtime, actor(member), member.merchant_id, account_id),
        "Membre désactivé : ses sessions sont terminées.",
    )


@router.post(PATH + "/{account_id}/link", dependencies=CSRF)
async def link(
    request: Request, member: Owner, session: SessionDep, runtime: RuntimeDep, account_id: str
) -> Response:
    return await _act(
        request,
        member,
        session,
        runtime,
        lambda: actions.link(session, runtime, actor(member), member.merchant_id, account_id),
    )
