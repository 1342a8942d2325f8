"""Where operators notify us: no merchant key, the connector reads (and, where the operator
signs, authenticates) the notification; MTN's and others' unsigned notices are hints."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from cauri.calls import service as calls
from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.operators.protocol import Notice
from cauri.runtime import Runtime


class CallbackRoute(UnitOfWorkRoute):
    # Operators send what they send: query parameters of their own, bodies of any shape.
    strict_input = False


router = APIRouter(route_class=CallbackRoute, tags=["operator callbacks"])


def _as_addressed(request: Request, runtime: Runtime) -> str:
    """The URL the operator called, as it signs it: under CAURI_PUBLIC_URL when that is set
    (a proxy in front terminates TLS), else as this server received it."""
    base = runtime.settings.public_url
    if base is None:
        return str(request.url)
    query = f"?{request.url.query}" if request.url.query else ""
    return f"{base.rstrip('/')}{request.url.path}{query}"


# Operators differ in the verb they notify with (MTN: PUT or POST).
_VERBS = ["POST", "PUT"]


async def _receive(
    request: Request, session: SessionDep, runtime: RuntimeDep, connector: str, ref: str | None
) -> dict[str, Any]:
    notice = Notice(
        request.method, _as_addressed(request, runtime), request.headers, await request.body()
    )
    await calls.receive_callback(session, runtime, connector, ref, notice=notice)
    return ok({"received": True})


@router.api_route("/operator-callbacks/{connector}", methods=_VERBS, include_in_schema=False)
async def operator_callback(
    connector: str, request: Request, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    return await _receive(request, session, runtime, connector, None)


@router.api_route(
    "/operator-callbacks/{connector}/{reference}", methods=_VERBS, include_in_schema=False
)
async def operator_callback_about(
    connector: str, reference: str, request: Request, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    return await _receive(request, session, runtime, connector, reference)
