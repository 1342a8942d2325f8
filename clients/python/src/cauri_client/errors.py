"""The API's refusals as exception classes, one per error code of the spec.

Branch on the class (or on `code`), never on `message`: it is a French sentence for people
and may change. A code this version does not know raises `CauriError` itself, with the code
as sent: the spec adds codes in minor versions, and treats an unknown one as a recoverable
incident.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import httpx


class CauriError(Exception):
    """A refusal of the API, or a call that got no usable answer.

    `details` maps each invalid field (dotted for nested ones: `customer.email`) to its
    messages, on validation errors only. `reference` is the resource a refusal recorded
    (a payment or payout kept `failed`). `request_id` is the server's id of the request, to
    quote to its operator. `retry_after` is the delay, in seconds, the API asked to wait
    before trying again (`Retry-After`, sent with 429)."""

    code: str
    message: str
    http_status: int | None
    details: Mapping[str, Sequence[str]] | None
    reference: str | None
    request_id: str | None
    retry_after: float | None

    def __init__(
        self,
        code: str,
        message: str,
        *,
        http_status: int | None = None,
        details: Mapping[str, Sequence[str]] | None = None,
        reference: str | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.http_status = http_status
        self.details = details
        self.reference = reference
        self.request_id = request_id
        self.retry_after = retry_after


class KnownError(CauriError):
    """An error code of the spec; each subclass names its own."""

    CODE: ClassVar[str]


class Unauthorized(KnownError):
    """401: key absent or invalid, or a malformed Authorization header."""

    CODE = "unauthorized"


class KeyExpired(KnownError):
    """401: the key is past its expiry date."""

    CODE = "key_expired"


class MerchantInactive(KnownError):
    """403: the account is not active (live only; test keys keep working)."""

    CODE = "merchant_inactive"


class InvalidRequest(KnownError):
    """422: the request breaks a rule; `details` says which fields."""

    CODE = "invalid_request"


class PaymentFailed(KnownError):
    """402: the operator refused the payment; it is recorded `failed` (`reference`)."""

    CODE = "payment_failed"


class InsufficientFunds(KnownError):
    """402: the balance does not cover the payout and its fees; nothing was taken."""

    CODE = "insufficient_funds"


class PayoutFailed(KnownError):
    """402: the operator refused the payout; nothing was taken."""

    CODE = "payout_failed"


class RefundFailed(KnownError):
    """402: the operator refused the refund; nothing was debited."""

    CODE = "refund_failed"


class PayoutLimitExceeded(KnownError):
    """403: the 24-hour cap of payouts to third parties is reached."""

    CODE = "payout_limit_exceeded"


class NotFound(KnownError):
    """404: no such resource in the key's environment (or another account's)."""

    CODE = "not_found"


class Conflict(KnownError):
    """409: the resource's state forbids the operation; read it again before retrying."""

    CODE = "conflict"


class MethodNotAllowed(KnownError):
    """405: the route does not take this HTTP method."""

    CODE = "method_not_allowed"


class PayloadTooLarge(KnownError):
    """413: the body is over the size the API takes."""

    CODE = "payload_too_large"


class RateLimited(KnownError):
    """429: too many requests; `retry_after` says how long to wait."""

    CODE = "rate_limited"


class ServerError(KnownError):
    """500: an incident of the service."""

    CODE = "server_error"


class ConnectionFailed(CauriError):
    """No answer came: the connection failed or timed out, after the retries allowed.

    `sent` is False when the connection never opened (nothing reached the service). When
    True, a creation may have been made all the same: read it back by its `external_id`."""

    sent: bool

    def __init__(self, error: httpx.TransportError) -> None:
        super().__init__(
            "timeout" if isinstance(error, httpx.TimeoutException) else "connection_failed",
            f"{type(error).__name__}: {error}",
        )
        self.sent = not isinstance(
            error, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout
        )


class UnexpectedResponse(CauriError):
    """An answer that is not the API's envelope (a proxy's error page, a wrong base URL)."""


_BY_CODE: Mapping[str, type[KnownError]] = {cls.CODE: cls for cls in KnownError.__subclasses__()}


def from_response(response: httpx.Response) -> CauriError:
    """The error an unsuccessful answer stands for."""
    request_id = response.headers.get("x-request-id")
    try:
        body: Any = response.json()
        error = body["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, TypeError, KeyError):
        return UnexpectedResponse(
            "unexpected_response",
            f"HTTP {response.status_code}: {response.text[:200]}",
            http_status=response.status_code,
            request_id=request_id,
        )
    return _BY_CODE.get(code, CauriError)(
        code,
        message,
        http_status=response.status_code,
        details=error.get("details"),
        reference=error.get("reference"),
        request_id=request_id,
        retry_after=_seconds_to_wait(response),
    )


def _seconds_to_wait(response: httpx.Response) -> float | None:
    """The `Retry-After` header in seconds, when it is a number (the API sends seconds)."""
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except (KeyError, ValueError):
        return None
