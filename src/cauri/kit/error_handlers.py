"""One renderer for every error: the spec's envelope, whatever went wrong and wherever."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException
from starlette.types import Receive, Scope, Send

from cauri.kit.errors import (
    CauriError,
    InvalidRequest,
    MethodNotAllowed,
    NotFound,
    ServerError,
)
from cauri.kit.validation_messages import validation_error

log = structlog.get_logger("cauri.http")


def render(error: CauriError) -> JSONResponse:
    return JSONResponse(error.envelope(), status_code=error.http_status, headers=error.headers)


def log_crash(path: str | None, exc: BaseException) -> None:
    """A crash, logged whole (with the request id bound by the caller); nothing of it is
    for the client."""
    log.exception("http.unhandled_error", path=path, exc_info=exc)


async def crashed(scope: Scope, receive: Receive, send: Send, exc: Exception) -> None:
    """A crash: logged, answered with a bare 500 envelope."""
    log_crash(scope.get("path"), exc)
    await render(ServerError())(scope, receive, send)


Observer = Callable[[Request, CauriError], Awaitable[None]]


def install(app: FastAPI, observe: Observer | None = None) -> None:
    """The API's refusals as envelopes; `observe` sees each one (an account's are kept for
    its developers: cauri.merchants.api_errors)."""

    async def answer(request: Request, error: CauriError) -> JSONResponse:
        if observe is not None:
            await observe(request, error)
        return render(error)

    async def cauri_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, CauriError)
        return await answer(request, exc)

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return await answer(request, validation_error(exc))

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        error: CauriError
        if exc.status_code == 404:
            error = NotFound("Aucune route ne correspond à cette adresse.")
        elif exc.status_code == 405:
            error = MethodNotAllowed()
        elif exc.status_code == 400:
            error = InvalidRequest("La requête est mal formée.")
        else:
            error = ServerError()
        response = await answer(request, error)
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    app.add_exception_handler(CauriError, cauri_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http_error)


class ErrorBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str
    message: str
    details: dict[str, list[str]] | None = None
    reference: str | None = Field(
        default=None,
        description="On a 402 that recorded a failed resource (payment_failed, payout_failed, "
        "refund_failed): its reference, to read it even without an external_id.",
    )


class ErrorEnvelope(BaseModel):
    """The spec's error envelope, as the OpenAPI document shows it for every refusal
    (cauri.openapi.document)."""

    model_config = ConfigDict(extra="forbid")

    success: Literal[False]
    error: ErrorBody
