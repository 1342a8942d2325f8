"""The staff accounts, for administrators: who may sign in, with which role, and how; and
the forms of `cauri staff create|disable|link`, through the same staff actions (audited).

A new account, or a new link for one, gets a one-time sign-in link shown on the answer to
the form only (no redirect: an address would keep it, in the history and the logs); the
administrator hands it over. Disabling asks for a confirmation and ends the person's
sessions at once."""

from __future__ import annotations

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.acting import actor, permission
from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, InvalidRequest
from cauri.models.people import STAFF_ROLES
from cauri.people import accounts, totp
from cauri.people.accounts import IssuedLink
from cauri.people.realm import STAFF
from cauri.runtime import Runtime
from cauri.signin.doors import CONSOLE
from cauri.signin.forms import posted
from cauri.staff import actions
from cauri.staff.roles import Permission

PATH = "/staff"
CONFIRM_DISABLE = "Cochez la case de confirmation pour désactiver le compte : rien n'a changé."
DONE = {"desactive": "Compte désactivé : ses sessions sont terminées."}

pages = Pages()


async def _list(
    request: Request,
    session: AsyncSession,
    refusal: CauriError | None = None,
    issued: IssuedLink | None = None,
    runtime: Runtime | None = None,
) -> Response:
    link = None
    if issued is not None and runtime is not None:
        link = CONSOLE.welcome_link(request, runtime.settings, issued.token)
    context = {
        "accounts": await accounts.list_accounts(session, STAFF),
        "roles": STAFF_ROLES,
        "refusal": refusal,
        "done": DONE.get(request.query_params.get("fait", "")),
        "issued": issued,
        "link": link,
    }
    status = refusal.http_status if refusal else 200
    return render(request, "console/staff.html", context, status)


@pages.get(PATH, Permission.MANAGE_STAFF, menu="Personnel")
async def staff_accounts(request: Request, staff: Staff, session: SessionDep) -> Response:
    return await _list(request, session)


async def _with_link(
    request: Request, session: AsyncSession, runtime: Runtime, result: IssuedLink | CauriError
) -> Response:
    if isinstance(result, CauriError):
        return await _list(request, session, result)
    return await _list(request, session, issued=result, runtime=runtime)


@pages.post(PATH, permission(actions.CREATE_STAFF))
async def create_staff(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """As `cauri staff create EMAIL --role ROLE`: the account, then its first link."""
    fields = await posted(request)

    async def create() -> IssuedLink:
        totp.required_key(runtime.settings.secret_key)
        account = await actions.create_staff(
            session,
            runtime,
            actor(staff),
            email=fields.get("email", ""),
            role=fields.get("role", ""),
        )
        return await accounts.issue_link(session, account, runtime.clock.now())

    return await _with_link(request, session, runtime, await attempt(session, create))


@pages.post(PATH + "/link", permission(actions.LINK_STAFF))
async def link_staff(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """As `cauri staff link EMAIL`: earlier links stop working, the sessions end."""
    email = (await posted(request)).get("email", "")

    async def link() -> IssuedLink:
        totp.required_key(runtime.settings.secret_key)
        return await actions.link_staff(session, runtime, actor(staff), email)

    return await _with_link(request, session, runtime, await attempt(session, link))


@pages.post(PATH + "/disable", permission(actions.DISABLE_STAFF))
async def disable_staff(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """As `cauri staff disable EMAIL`, once the box is ticked."""
    fields = await posted(request)
    if fields.get("confirm") != "on":
        return await _list(request, session, InvalidRequest(CONFIRM_DISABLE))
    result = await attempt(
        session,
        lambda: actions.disable_staff(session, runtime, actor(staff), fields.get("email", "")),
    )
    if isinstance(result, CauriError):
        return await _list(request, session, result)
    return redirect(f"{PREFIX}{PATH}?fait=desactive")
