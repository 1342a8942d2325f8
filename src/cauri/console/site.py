"""The console as the app serves it at /console: its groups of pages, in the order of the
menu, its stylesheet, and an HTML 404 for every other address under /console."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI, Response

from cauri.console import (
    approvals,
    audit_log,
    connectors,
    deliveries,
    exports,
    ledger,
    merchant_actions,
    merchant_admin,
    merchants,
    overview,
    plan_resolution,
    resources,
    settings,
    sign_in,
    staff_accounts,
)
from cauri.console.pages import Pages
from cauri.console.rendering import ConsoleRoute
from cauri.console.security import PREFIX
from cauri.kit.errors import NotFound

# Each group's menu entries appear in this order; a new group of pages is added here.
GROUPS: tuple[Pages, ...] = (
    overview.pages,
    resources.pages,
    approvals.pages,
    deliveries.pages,
    merchants.pages,
    merchant_actions.pages,
    merchant_admin.pages,
    plan_resolution.pages,
    connectors.pages,
    ledger.pages,
    exports.pages,
    audit_log.pages,
    settings.pages,
    staff_accounts.pages,
)

STYLESHEET = (Path(__file__).parent / "static" / "console.css").read_bytes()
STYLESHEET_PATH = "/static/console.css"

_own = APIRouter(route_class=ConsoleRoute, include_in_schema=False)


@_own.get(STYLESHEET_PATH)
async def stylesheet() -> Response:
    return Response(STYLESHEET, media_type="text/css")


_not_found = APIRouter(route_class=ConsoleRoute, include_in_schema=False)


@_not_found.api_route("/{path:path}", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
async def not_found() -> Response:
    raise NotFound("Cette page de la console n'existe pas.")


def install(app: FastAPI) -> None:
    router = APIRouter(prefix=PREFIX, include_in_schema=False)
    router.include_router(_own)
    router.include_router(sign_in.router)
    for group in GROUPS:
        router.include_router(group.router)
    router.include_router(_not_found)  # last: it answers whatever the others do not
    app.include_router(router)
    app.state.console_menu = tuple(entry for group in GROUPS for entry in group.menu)
