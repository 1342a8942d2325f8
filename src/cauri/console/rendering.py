"""The console's one renderer: every page is a template of templates/console/ extending its
layout, rendered with the signed-in person, the menu their role allows and their session's
CSRF token; every response, errors and redirects included, carries the security headers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Request, Response
from fastapi.templating import Jinja2Templates

from cauri import signin
from cauri.console.security import PREFIX
from cauri.signin import formats
from cauri.signin.doors import CONSOLE
from cauri.signin.route import page_route
from cauri.signin.route import redirect as redirect
from cauri.staff.roles import ROLE_NAMES_FR, Permission, allows

# The console's pages, and the sign-in pages every door shares.
templates = Jinja2Templates(
    directory=[Path(__file__).parent / "templates", Path(signin.__file__).parent / "templates"]
)
SIGN_IN_PATH = CONSOLE.sign_in_path


@dataclass(frozen=True)
class MenuEntry:
    path: str
    label: str
    permission: Permission


formats.install(templates.env)
# What the templates every door shares (cauri/signin/templates/signin/) ask of the console's.
templates.env.globals |= {
    "layout": "console/layout.html",
    "door": CONSOLE,
    "home_label": "Retour à la vue d'ensemble",
    "base": PREFIX,
    "for_staff": True,
}
templates.env.globals["role_name"] = lambda role: ROLE_NAMES_FR.get(role, role)


def menu_of(request: Request, role: str | None) -> list[MenuEntry]:
    entries: Sequence[MenuEntry] = request.app.state.console_menu
    return [entry for entry in entries if role is not None and allows(role, entry.permission)]


def render(
    request: Request, name: str, context: dict[str, Any] | None = None, status_code: int = 200
) -> Response:
    """A page of the console. `staff` (the signed-in person, set by the `signed_in`
    dependency), `menu` and `csrf` are filled in; `context` may set `csrf` itself (the forms
    shown before a session)."""
    staff = getattr(request.state, "staff", None)
    base: dict[str, Any] = {
        "staff": staff,
        "person": staff,
        "menu": menu_of(request, staff.role if staff else None),
        "csrf": staff.csrf_token if staff else None,
        "current_path": request.url.path,
        # A webhook delivery's page offers a resend to those who may.
        "resend_form": (
            "console/resend.html"
            if staff and allows(staff.role, Permission.RESEND_WEBHOOKS)
            else None
        ),
    }
    return templates.TemplateResponse(
        request, name, base | (context or {}), status_code=status_code
    )


ConsoleRoute = page_route(CONSOLE, render)
