"""What the OpenAPI document says a route answers: its success envelope around the resource,
and the refusals particular to it, each status with the error envelope and one example per
code. The refusals every route shares (key, rate limit, path parameter, body) are added in
one place, `cauri.openapi`, from what the route declares."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from cauri.kit.errors import CauriError

Data = TypeVar("Data")

Responses = dict[int | str, dict[str, Any]]


class Envelope(BaseModel, Generic[Data]):
    """Every success (spec: Conventions)."""

    model_config = ConfigDict(extra="forbid")

    success: Literal[True]
    data: Data


class ListMeta(BaseModel):
    model_config = ConfigDict(extra="forbid")

    current_page: int = Field(ge=1)
    per_page: int = Field(ge=1, le=100)
    total: int = Field(ge=0)
    last_page: int = Field(ge=1)


class ListEnvelope(BaseModel, Generic[Data]):
    """Every list, newest first (spec: List envelope)."""

    model_config = ConfigDict(extra="forbid")

    success: Literal[True]
    data: list[Data]
    meta: ListMeta


# What each code means for the merchant's program (spec: Errors), shown with its status.
MEANINGS: dict[str, str] = {
    "unauthorized": "the key is missing or invalid, or the header is malformed",
    "key_expired": "the key is past its expiry date",
    "merchant_inactive": "the account is not active (live keys only; test keys keep working)",
    "invalid_request": "a malformed body, a missing or unknown field or query parameter, a "
    "value out of bounds, or a business rule (`details` names each field)",
    "payment_failed": "the operator refused the payment, or its route is closed; the payment "
    "is recorded as `failed`",
    "insufficient_funds": "the balance does not cover the operation, fees included; nothing "
    "was taken",
    "payout_failed": "the operator refused the payout, or the disbursement service is "
    "unavailable; nothing was taken",
    "refund_failed": "the operator refused the refund; nothing was debited",
    "payout_limit_exceeded": "the third-party payout caps (per payout or over 24 hours) are "
    "reached",
    "not_found": "no such resource for this key's account and environment",
    "conflict": "the resource's current state forbids the operation; read it again before retrying",
    "payload_too_large": "the body is larger than 256 KiB",
    "rate_limited": "too many requests from this address; `Retry-After` gives the delay",
    "server_error": "an incident of the service; may be retried with growing delays",
}

_DETAILS_EXAMPLE = {"amount": ["Champ obligatoire."]}


def example(error: type[CauriError]) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.default_message}
    if error.code == "invalid_request":
        body["details"] = _DETAILS_EXAMPLE
    return {"success": False, "error": body}


def refusal(errors: list[type[CauriError]]) -> dict[str, Any]:
    """The response of one error status: the envelope, each code described and shown."""
    codes = list(dict.fromkeys(error.code for error in errors))
    lines = [f"`{code}`: {MEANINGS.get(code, code)}." for code in codes]
    by_code = {error.code: error for error in errors}
    return {
        "description": "\n\n".join(lines),
        "content": {
            "application/json": {
                "schema": {"$ref": "#/components/schemas/ErrorEnvelope"},
                "examples": {code: {"value": example(by_code[code])} for code in codes},
            }
        },
    }


def by_status(errors: list[type[CauriError]]) -> dict[int, list[type[CauriError]]]:
    grouped: dict[int, list[type[CauriError]]] = {}
    for error in errors:
        grouped.setdefault(error.http_status, []).append(error)
    return grouped


def refusals(*errors: type[CauriError]) -> Responses:
    """`responses` entries for these errors, grouped by status."""
    return {status: refusal(group) for status, group in by_status(list(errors)).items()}


def answers(
    data: Any, *errors: type[CauriError], status: int = 200, replayed: bool = False
) -> Responses:
    """A route's `responses`: `data` in the success envelope (pass `ListEnvelope[X]` or a
    whole envelope model as is), answered with `status` (200 too for an idempotent replay
    when `replayed`), and the refusals particular to the route."""
    is_envelope = isinstance(data, type) and issubclass(data, ListEnvelope | Envelope)
    model = data if is_envelope else Envelope[data]
    said = "Created" if status == 201 else "Done"
    success: Responses = {status: {"model": model, "description": f"{said}: the success envelope."}}
    if replayed:
        success[200] = {
            "model": model,
            "description": "An idempotent replay: the resource created earlier with the same "
            "`external_id`, unchanged.",
        }
    return success | refusals(*errors)
