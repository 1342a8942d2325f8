"""The OpenAPI document of `/api/v1`, as FastAPI builds it from the routes, completed in one
place: the bearer key scheme on every operation that takes a key, and the refusals every
route shares, added from what the route declares (a key, a path parameter, a body). Each
route states its success and its own refusals with `cauri.kit.openapi.answers`."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts

from cauri.kit.error_handlers import ErrorEnvelope
from cauri.kit.errors import (
    CauriError,
    InvalidRequest,
    KeyExpired,
    MerchantInactive,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    Unauthorized,
)
from cauri.kit.openapi import by_status, refusal
from cauri.merchants.auth import KEY_CHECKS

SCHEME = "apiKey"
ERROR_REF = "#/components/schemas/ErrorEnvelope"

DESCRIPTION = """\
Collect money by Mobile Money and card, run installment plans, send payouts, refund, and
receive signed webhooks.

**Keys.** Every operation takes `Authorization: Bearer <key>`. A key starting `sk_test_`
works in the test environment: no money moves, no operator is contacted, and only test
resources are visible (outcomes follow the last four digits of the number: `0000`
succeeds at once, `0001` is refused, `0002` stays pending, `0003` fails later, any other
succeeds after a few seconds). A key starting `sk_live_` works in live.

**Envelopes.** A success is `{"success": true, "data": …}`; a list adds
`meta: {current_page, per_page, total, last_page}` and is newest first (`page`, and
`per_page` from 1 to 100, default 25). An error is
`{"success": false, "error": {"code", "message", "details"?}}`: programs branch on `code`;
`message` is a French sentence for people; `details` maps each field to its messages.

**Money.** Amounts are numbers in the currency's unit (5000 is 5000 XOF). Unknown fields and
query parameters are refused (422), never ignored.

**Limits.** 120 requests per minute per address, then 429 with `Retry-After`. Bodies up to
256 KiB. Replaying `POST /payments`, `/payouts` or `/installment-plans` with the same
`external_id` returns the resource created the first time (200).
"""

_SECURITY_SCHEME = {
    "type": "http",
    "scheme": "bearer",
    "bearerFormat": "sk_test_… or sk_live_…",
    "description": "The merchant's secret key: `sk_test_…` selects the test environment, "
    "`sk_live_…` the live one.",
}

_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before the next request.",
        "schema": {"type": "integer", "minimum": 0},
    }
}


def install(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def build(app: FastAPI) -> dict[str, Any]:
    document = get_openapi(
        title=app.title,
        version=app.version,
        description=DESCRIPTION,
        routes=app.routes,
    )
    components = document.setdefault("components", {})
    components["securitySchemes"] = {SCHEME: _SECURITY_SCHEME}
    schemas = components.setdefault("schemas", {})
    envelope = ErrorEnvelope.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(envelope.pop("$defs", {}))
    schemas["ErrorEnvelope"] = envelope
    for route in iter_route_contexts(app.routes):
        # A context: the route as included (prefix, router's settings), as FastAPI reads it.
        if isinstance(route.original_route, APIRoute) and route.include_in_schema:
            for method in route.methods or ():
                _complete(document["paths"][route.path_format][method.lower()], route)
    # FastAPI's own 422 shape is replaced by the error envelope everywhere.
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    return document


def _complete(operation: dict[str, Any], route: RouteContext) -> None:
    responses: dict[str, Any] = operation["responses"]
    _keep_only_references(responses)
    if _takes_a_key(route.dependant):
        operation["security"] = [{SCHEME: []}]
    for status, errors in by_status(shared_refusals(route)).items():
        _merge(responses, str(status), errors)
    responses["429"]["headers"] = _RETRY_AFTER


def shared_refusals(route: RouteContext) -> list[type[CauriError]]:
    """What any route of its kind may answer, whatever its handler does."""
    errors: list[type[CauriError]] = []
    if _takes_a_key(route.dependant):
        errors += [Unauthorized, KeyExpired, MerchantInactive]
    if route.dependant.path_params:
        errors.append(NotFound)
    if (route.methods or set()) & {"POST", "PUT", "PATCH"}:
        errors.append(PayloadTooLarge)
    # Every route refuses an unknown query parameter or body field (422).
    errors += [InvalidRequest, RateLimited, ServerError]
    return errors


def _takes_a_key(dependant: Dependant) -> bool:
    return dependant.call in KEY_CHECKS or any(_takes_a_key(sub) for sub in dependant.dependencies)


def _keep_only_references(responses: dict[str, Any]) -> None:
    """A success documented by a model: FastAPI merges it into the `dict` the handler is
    annotated with; the model alone is the truth."""
    for answer in responses.values():
        for media in answer.get("content", {}).values():
            schema = media.get("schema", {})
            if "$ref" in schema:
                media["schema"] = {"$ref": schema["$ref"]}


def _merge(responses: dict[str, Any], status: str, errors: list[type[CauriError]]) -> None:
    """Adds `errors` to the route's own refusals of that status, if it declares some."""
    present = responses.get(status)
    media = (present or {}).get("content", {}).get("application/json", {})
    if present is None or media.get("schema", {}).get("$ref") != ERROR_REF:
        responses[status] = refusal(errors)  # new, or FastAPI's own 422 shape
        return
    examples = media.setdefault("examples", {})
    new = [error for error in errors if error.code not in examples]
    if new:
        added = refusal(new)
        examples.update(added["content"]["application/json"]["examples"])
        present["description"] += "\n\n" + added["description"]
