"""The console's one renderer: every page is a template of templates/console/ extending its
layout, rendered with the signed-in person, the menu their role allows and their session's
CSRF token; every response, errors and redirects included, carries the security headers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from fastapi import Request, Response
from fastapi.templating import Jinja2Templates
from sqlalchemy.ext.asyncio import AsyncSession

from cauri import signin
from cauri.console.security import CONSOLE
from cauri.kit.errors import CauriError
from cauri.kit.wording import status_word
from cauri.signin.route import page_route
from cauri.signin.route import redirect as redirect
from cauri.staff.roles import ROLE_NAMES_FR, Permission, allows
from cauri.web.rendering import format_amount

# The console's pages, and the sign-in pages every door shares.
templates = Jinja2Templates(
    directory=[Path(__file__).parent / "templates", Path(signin.__file__).parent / "templates"]
)
SIGN_IN_PATH = CONSOLE.sign_in_path

ERROR_TITLES = {
    401: "Connexion requise",
    403: "Action refusée",
    404: "Page introuvable",
    422: "Demande invalide",
    429: "Trop de tentatives",
    500: "Erreur interne",
}


@dataclass(frozen=True)
class MenuEntry:
    path: str
    label: str
    permission: Permission


def format_money(minor: int | None, currency: str) -> str:
    """fr-FR, with the currency (`cauri.web.rendering.format_amount`); ledger balances may be
    below zero (operators' clearing accounts)."""
    if minor is None:
        return "—"
    return ("-" if minor < 0 else "") + format_amount(abs(minor), currency)


def format_percent(share: float | None) -> str:
    """`66,7 %`; a dash while there is nothing to divide."""
    if share is None:
        return "—"
    return f"{share * 100:.1f}".replace(".", ",") + "\u202f%"


def format_decimal(value: Decimal) -> str:
    """`2,5` for Decimal("2.5000"): fr-FR, no trailing zero."""
    return f"{value.normalize():f}".replace(".", ",")


# Values that kit.wording does not word (merchants', approvals', routes' states).
_LABELS = {
    "active": "actif",
    "kyc_pending": "KYC en attente",
    "suspended": "suspendu",
    "required": "à approuver",
    "approved": "approuvé",
    "rejected": "rejeté",
    "operational": "opérationnel",
    "degraded": "dégradé",
    "closed": "fermé",
}


def status_label(status: str | None) -> str:
    if status is None:
        return "—"
    return _LABELS.get(status) or status_word(status)


def format_datetime(instant: datetime | None) -> str:
    """`25/11/2026 14:32 UTC` (fr-FR order; the platform's times are UTC)."""
    if instant is None:
        return "—"
    return instant.astimezone(UTC).strftime("%d/%m/%Y %H:%M UTC")


templates.env.filters["amount"] = format_money
templates.env.filters["percent"] = format_percent
templates.env.filters["decimal"] = format_decimal
templates.env.filters["status"] = status_label
templates.env.filters["mode"] = lambda livemode: "live" if livemode else "test"
templates.env.filters["datetime"] = format_datetime
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
        "menu": menu_of(request, staff.role if staff else None),
        "csrf": staff.csrf_token if staff else None,
        "current_path": request.url.path,
    }
    return templates.TemplateResponse(
        request, name, base | (context or {}), status_code=status_code
    )


def error_page(request: Request, error: CauriError) -> Response:
    context = {
        "title": ERROR_TITLES.get(error.http_status, "Une erreur est survenue"),
        "message": error.message,
    }
    response = render(request, "console/error.html", context, status_code=error.http_status)
    response.headers.update(error.headers)
    return response


ConsoleRoute = page_route(CONSOLE, error_page)


async def closing_after(
    session: AsyncSession, lines: AsyncIterator[str], *first: str
) -> AsyncIterator[str]:
    """A download's lines (`first`, already read, then `lines`), read in a session of its own
    (the request's has ended when the body is sent), closed when the stream ends or is
    abandoned."""
    try:
        for line in first:
            yield line
        async for line in lines:
            yield line
    finally:
        await session.close()
