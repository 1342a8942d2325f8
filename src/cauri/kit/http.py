"""HTTP plumbing shared by every router: the unit of work, envelopes, common dependencies."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.routing import APIRoute
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import CauriError
from cauri.runtime import Runtime


class UnitOfWorkRoute(APIRoute):
    """Opens the request's session and commits it before the response leaves, so a client
    never reads a success that was not durable; rolls back on any error, except the errors
    that record a fact (`keeps_writes`)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            runtime: Runtime = request.app.state.runtime
            async with runtime.sessionmaker() as session:
                request.state.session = session
                try:
                    response = await handler(request)
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
