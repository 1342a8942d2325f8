"""The dashboard's one renderer: every page is a template of templates/dashboard/ extending
its layout, rendered with the signed-in member, their merchant, the environment shown (live
or test) and their session's CSRF token; every response carries the security headers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request, Response
from fastapi.templating import Jinja2Templates

from cauri import signin
from cauri.dashboard.security import PREFIX
from cauri.signin import formats
from cauri.signin.doors import DASHBOARD
from cauri.signin.route import page_route
from cauri.team.roles import ROLE_NAMES_FR, Permission, allows

templates = Jinja2Templates(
    directory=[Path(__file__).parent / "templates", Path(signin.__file__).parent / "templates"]
)
formats.install(templates.env)
templates.env.globals["role_name"] = lambda role: ROLE_NAMES_FR.get(role, role)
templates.env.globals["may"] = lambda member, name: allows(member.role, Permission(name))
# What the templates every door shares (cauri/signin/templates/signin/) ask of the
# dashboard's; `base`, the environment's prefix, is each page's.
templates.env.globals |= {
    "layout": "dashboard/layout.html",
    "door": DASHBOARD,
    "home_label": "Retour à l'accueil",
    "for_staff": False,
}


def render(
    request: Request, name: str, context: dict[str, Any] | None = None, status_code: int = 200
) -> Response:
    """A page of the dashboard. `member` (set by the `signed_in` dependency), `csrf` and the
    environment's `base` (`livemode` in `context`, else live) are filled in; `context` may
    set `csrf` itself (the forms shown before a session)."""
    member = getattr(request.state, "member", None)
    context = context or {}
    livemode = context.get("livemode", True)
    filled: dict[str, Any] = {
        "member": member,
        "person": member,
        "csrf": member.csrf_token if member else None,
        "current_path": request.url.path,
        "livemode": livemode,
        "base": base_of(livemode),
        # A delivery on a payment's (or plan's, payout's, refund's) page offers a resend to
        # those who manage the webhooks.
        "resend_form": (
            "dashboard/resend.html" if member and allows(member.role, Permission.DEVELOP) else None
        ),
    }
    return templates.TemplateResponse(request, name, filled | context, status_code=status_code)


def base_of(livemode: bool) -> str:
    """The prefix of the environment's pages: live data under /dashboard/…, test data under
    /dashboard/test/…"""
    return PREFIX if livemode else f"{PREFIX}/test"


DashboardRoute = page_route(DASHBOARD, render)
