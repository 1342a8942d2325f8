"""The merchant's settings (owners): the business name and support email its customers see,
its logo (PNG or JPEG, re-encoded), who bears the commission (read: the payment company sets
it), and the payout account: a new one is asked for here and validated by the staff, payouts
going meanwhile to the account validated before. cauri.team.settings decides."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import UploadFile

from cauri.dashboard.acting import actor
from cauri.dashboard.auth import SignedIn, checked_csrf, require
from cauri.dashboard.payouts import OPERATORS
from cauri.dashboard.rendering import DashboardRoute, render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError
from cauri.merchants.service import merchants
from cauri.models import Merchant
from cauri.signin.forms import Form, posted
from cauri.signin.route import redirect
from cauri.team import settings
from cauri.team.roles import Permission

PATH = "/settings"
DONE = {
    "profil": "Nom et adresse de support enregistrés.",
    "logo": "Logo enregistré.",
    "compte": "Compte de transfert demandé : l'équipe de la plateforme le validera.",
}

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Owner = Annotated[SignedIn, Depends(require(Permission.MANAGE_TEAM))]
CSRF = [Depends(checked_csrf)]


async def _page(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    form: Form | None = None,
    refusal: CauriError | None = None,
) -> Response:
    merchant = await merchants.get(session, member.merchant_id)
    shown = form or Form({"name": merchant.name, "support_email": merchant.support_email or ""})
    context = {
        "merchant": merchant,
        "form": shown,
        "operators": OPERATORS,
        "refusal": refusal,
        "done": None if refusal else DONE.get(request.query_params.get("fait", "")),
    }
    status = refusal.http_status if refusal else 200
    return render(request, "dashboard/settings.html", context, status)


async def _saved(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    change: Callable[[], Awaitable[Merchant]],
    done: str,
    form: Form | None = None,
) -> Response:
    outcome = await attempt(session, change)
    if isinstance(outcome, CauriError):
        if form is not None:
            form.refuse(outcome)
        return await _page(request, member, session, form, outcome)
    return redirect(f"/dashboard{PATH}?fait={done}")


@router.get(PATH)
async def settings_page(request: Request, member: Owner, session: SessionDep) -> Response:
    return await _page(request, member, session)


@router.post(PATH + "/profile", dependencies=CSRF)
async def profile(
    request: Request, member: Owner, session: SessionDep, runtime: RuntimeDep
) -> Response:
    fields = await posted(request)
    form = Form({"name": fields.get("name", ""), "support_email": fields.get("support_email", "")})
    return await _saved(
        request,
        member,
        session,
        lambda: settings.set_profile(
            session,
            runtime,
            actor(member),
            member.merchant_id,
            name=form.values["name"],
            support_email=form.values["support_email"] or None,
        ),
        "profil",
        form,
    )


@router.post(PATH + "/logo", dependencies=CSRF)
async def logo(
    request: Request, member: Owner, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """A file sent replaces the logo; `remove` removes it."""
    sent = (await request.form()).get("logo")
    data = await sent.read(settings.LOGO_BYTES + 1) if isinstance(sent, UploadFile) else b""
    removed = (await posted(request)).get("remove") == "1"
    return await _saved(
        request,
        member,
        session,
        lambda: settings.set_logo(
            session, runtime, actor(member), member.merchant_id, None if removed else data
        ),
        "logo",
    )


@router.post(PATH + "/payout-account", dependencies=CSRF)
async def payout_account(
    request: Request, member: Owner, session: SessionDep, runtime: RuntimeDep
) -> Response:
    fields = await posted(request)
    return await _saved(
        request,
        member,
        session,
        lambda: settings.ask_payout_account(
            session,
            runtime,
            actor(member),
            member.merchant_id,
            phone_number=fields.get("phone_number", ""),
            operator=fields.get("operator", ""),
        ),
        "compte",
    )


@router.get(PATH + "/logo.png")
async def logo_image(member: Owner, session: SessionDep) -> Response:
    """The logo as the checkout pages show it."""
    data = await settings.logo(session, member.merchant_id)
    if data is None:
        return Response(status_code=404)
    return Response(data, media_type="image/png", headers={"Cache-Control": "private, no-cache"})
