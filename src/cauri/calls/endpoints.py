"""Where operators notify us: no merchant key, the connector reads (and, where the operator
signs, authenticates) the notification; MTN's and others' unsigned notices are hints."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from cauri.calls import service as calls
from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok

router = APIRouter(route_class=UnitOfWorkRoute, tags=["operator callbacks"])

# Operators differ in the verb they notify with (MTN: PUT or POST).
_VERBS = ["POST", "PUT"]


async def _receive(
    request: Request, session: SessionDep, runtime: RuntimeDep, connector: str, ref: str | None
) -> dict[str, Any]:
    await calls.receive_callback(
        session,
        runtime,
        connector,
        ref,
        method=request.method,
        path=request.url.path,
        headers=request.headers,
        body=await request.body(),
    )
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
