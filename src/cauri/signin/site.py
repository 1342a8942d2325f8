"""A door as the app serves it under its prefix: its stylesheet, its sign-in pages, the
door's own pages, and an HTML 404 for every other address under the prefix."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, Response

from cauri.http import UnitOfWorkRoute
from cauri.kit.errors import NotFound
from cauri.signin.door import STYLESHEET, Door
from cauri.signin.route import Render
from cauri.signin.routes import sign_in_routes


def mount(
    parent: APIRouter,
    door: Door,
    render: Render,
    route_class: type[UnitOfWorkRoute],
    pages: Sequence[APIRouter],
    *,
    stylesheet_path: str,
    missing: str,
) -> None:
    """`pages` under `door.prefix`, with the stylesheet at `stylesheet_path` and `missing`
    as the message of an address that is none of them."""
    own = APIRouter(route_class=route_class, include_in_schema=False)

    @own.get(stylesheet_path)
    async def stylesheet() -> Response:
        return Response(STYLESHEET, media_type="text/css")

    @own.api_route("/{path:path}", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
    async def not_found() -> Response:
        raise NotFound(missing)

    router = APIRouter(prefix=door.prefix, include_in_schema=False)
    router.include_router(sign_in_routes(door, render, route_class))
    for group in pages:
        router.include_router(group)
    router.include_router(own)  # last: its catch-all answers whatever the others do not
    parent.include_router(router)
