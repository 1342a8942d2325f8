"""HTTP plumbing shared by every router: the unit of work, envelopes, common dependencies."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.routing import APIRoute
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.exceptions import HTTPException

from cauri.kit import strict_json
from cauri.kit.errors import CauriError, InvalidRequest
from cauri.runtime import Runtime

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class StrictJsonRequest(Request):
    """A request whose JSON body is read by `strict_json` (exact numbers, no repeated key)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = strict_json.loads(await self.body())
        return self._json


def refuse_unstorable_parameters(request: Request) -> None:
    """A NUL in a path or query parameter would reach PostgreSQL, which refuses it (a 500)."""
    parameters = [*request.path_params.items(), *request.query_params.multi_items()]
    for name, value in parameters:
        if strict_json.unstorable(name + value):
            field = "query" if strict_json.unstorable(name) else name
            raise InvalidRequest.field(field, "Le paramètre contient un caractère interdit (NUL).")


async def _run(handler: Handler, request: Request) -> Response:
    try:
        return await handler(request)
    except HTTPException as error:
        # FastAPI answers a bare 400 to whatever is raised while it reads the body; the
        # strict reader's refusal must reach the client as it is, a 422 with its details.
        if isinstance(error.__cause__, CauriError):
            raise error.__cause__ from None
        raise


class UnitOfWorkRoute(APIRoute):
    """Opens the request's session and commits it before the response leaves, so a client
    never reads a success that was not durable; rolls back on any error, except the errors
    that record a fact (`keeps_writes`). Bodies are read strictly, and parameters that
    PostgreSQL could not store are refused before any handler or dependency runs."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            request = StrictJsonRequest(request.scope, request.receive)
            refuse_unstorable_parameters(request)
            runtime: Runtime = request.app.state.runtime
            async with runtime.sessionmaker() as session:
                request.state.session = session
                try:
                    response = await _run(handler, request)
                except CauriError as error:
                    await (session.commit() if error.keeps_writes else session.rollback())
                    raise
                except BaseException:
                    await session.rollback()
                    raise
                await session.commit()
                return response

        return handle


# Coroutines, though they await nothing: FastAPI runs a plain function dependency in its
# thread pool, a thread hand-off per request for an attribute read.
async def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def get_session(request: Request) -> AsyncSession:
    session: AsyncSession = request.state.session
    return session


SessionDep = Annotated[AsyncSession, Depends(get_session)]
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


def ok(data: Any) -> dict[str, Any]:
    return {"success": True, "data": data}
