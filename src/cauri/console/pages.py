"""How a console page is declared: a group of pages (`Pages`) registers each route with the
permission it needs, and optionally its entry in the menu. A GET needs its permission; a
POST also needs the session's CSRF token. The group's router is then listed in
cauri.console.site, which decides the order of the menu.

    pages = Pages()

    @pages.get("/payouts", Permission.READ, menu="Transferts")
    async def payouts(request: Request, staff: Staff, session: SessionDep) -> Response:
        return render(request, "console/payouts.html", {...})

    @pages.post("/payouts/{reference}/approve", Permission.APPROVE_PAYOUTS)
    async def approve(request: Request, staff: Staff, reference: str, ...) -> Response:
        ...
        return redirect(f"{PREFIX}/payouts")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Depends

from cauri.console.auth import checked_csrf, require
from cauri.console.rendering import ConsoleRoute, MenuEntry
from cauri.console.security import PREFIX
from cauri.staff.roles import Permission

Handler = TypeVar("Handler", bound=Callable[..., Any])


class Pages:
    def __init__(self) -> None:
        self.router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)
        self.menu: list[MenuEntry] = []

    def get(
        self, path: str, permission: Permission, *, menu: str | None = None
    ) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.router.get(path, dependencies=[Depends(require(permission))])(handler)
            if menu is not None:
                self.menu.append(MenuEntry(PREFIX + path, menu, permission))
            return handler

        return register

    def post(self, path: str, permission: Permission) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            dependencies = [Depends(require(permission)), Depends(checked_csrf)]
            self.router.post(path, dependencies=dependencies)(handler)
            return handler

        return register
