"""HTTP plumbing shared by every router: the unit of work, envelopes, common dependencies."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any, ClassVar

from fastapi import Depends, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session
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


def declared_query_names(dependant: Dependant) -> frozenset[str]:
    """The query parameters a route reads, its dependencies' included (page, from, to…)."""
    names: set[str] = set()
    pending = [dependant]
    while pending:
        current = pending.pop()
        names.update(param.alias for param in current.query_params)
        pending.extend(current.dependencies)
    return frozenset(names)


def refuse_unknown_query_parameters(request: Request, declared: frozenset[str]) -> None:
    """A misspelt or unsupported filter must not silently return everything."""
    unknown = [name for name in request.query_params if name not in declared]
    if unknown:
        raise InvalidRequest(
            "La requête contient un paramètre inconnu.",
            {name: ["Paramètre inconnu."] for name in unknown},
        )


async def refuse_unexpected_body(request: Request) -> None:
    """A route that reads no body would silently ignore every field of one."""
    if not (await request.body()).strip():
        return
    sent = await request.json()
    if sent is None or sent == {}:
        return
    if isinstance(sent, dict):
        raise InvalidRequest(
            "La requête contient un champ inconnu.", {name: ["Champ inconnu."] for name in sent}
        )
    raise InvalidRequest.field("body", "Cette route ne prend pas de corps de requête.")


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
    PostgreSQL could not store are refused before any handler or dependency runs, with the
    query parameters and body fields that the route does not declare (body models refuse
    theirs: cauri.kit.request_body)."""

    # Off for routes that take what others send as it comes (operators' notifications).
    strict_input: ClassVar[bool] = True

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()
        declared = declared_query_names(self.dependant)

        async def handle(request: Request) -> Response:
            request = StrictJsonRequest(request.scope, request.receive)
            refuse_unstorable_parameters(request)
            if self.strict_input:
                refuse_unknown_query_parameters(request, declared)
                if self.body_field is None:
                    await refuse_unexpected_body(request)
            runtime: Runtime = request.app.state.runtime
            session = runtime.sessionmaker()
            request.state.session = session
            try:
                response = await _run(handler, request)
            except CauriError as error:
                await _ended(session, error.keeps_writes)
                raise
            except BaseException:
                await _ended(session, False)
                raise
            await _ended(session, True)
            return response

        return handle


async def _ended(session: AsyncSession, keep: bool) -> None:
    """Commits or rolls back, then closes: in one hand-off to SQLAlchemy's greenlet (the
    commit, then the session's `async with`, took two and a task). The close is the
    greenlet's `finally`: it runs when the commit fails, and when the request is cancelled
    during the commit (the cancellation is thrown into the greenlet, which closes before
    the cancellation goes on), so the connection always goes back to the pool."""
    await session.run_sync(_then_closed, Session.commit if keep else Session.rollback)


def _then_closed(session: Session, end: Callable[[Session], None]) -> None:
    try:
        end(session)
    finally:
        session.close()


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


def created_or_replayed(data: Any, created: bool) -> JSONResponse:
    """A creation's answer: 201, or 200 for an idempotent replay of the same `external_id`."""
    return JSONResponse(ok(data), status_code=201 if created else 200)
