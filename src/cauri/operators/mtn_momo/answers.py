"""What MTN's answers mean for Cauri (pure: no network). Sources in docs/OPERATORS.md.

A request MTN accepted answers 202 with no body; a request under a reference it already
accepted answers 409 RESOURCE_ALREADY_EXIST, which for us is the same fact (accepted). A
status query answers the transaction, whose `status` is PENDING, SUCCESSFUL or FAILED, and
whose `reason` (when failed) is a code string or a `{code, message}` object, depending on
the product and version. A status query about a reference MTN does not know answers 404
RESOURCE_NOT_FOUND. Anything that says nothing for sure (5xx, 429, a body we cannot read)
is an unknown outcome, never a failure.
"""

from __future__ import annotations

import re
from typing import Any

from cauri.operators.exchange import parsed, stating, unknown
from cauri.operators.protocol import Exchange, OperatorResult, Outcome

# MTN's final statuses besides SUCCESSFUL: FAILED is documented; REJECTED, TIMEOUT and
# EXPIRED are what its sandbox's test numbers and some markets report.
_FAILED_STATUSES = frozenset({"FAILED", "REJECTED", "TIMEOUT", "EXPIRED", "CANCELLED"})
_PENDING_STATUSES = frozenset({"PENDING", "ONGOING", "CREATED"})


def reason_code(reason: object) -> str | None:
    """MTN's failure reason, either shape, as a short snake_case code."""
    if isinstance(reason, dict):
        reason = reason.get("code") or reason.get("message")
    if not isinstance(reason, str) or not reason.strip():
        return None
    return re.sub(r"[^a-z0-9]+", "_", reason.strip().lower()).strip("_")[:64] or None


def _body(text: str | None) -> dict[str, Any] | None:
    fields = parsed(text)
    return fields if isinstance(fields, dict) else None


def error_code(text: str | None) -> str | None:
    """The `code` of MTN's error body (`{"code": ..., "message": ...}`), or the message of
    its gateway's (`{"statusCode": 401, "message": ...}`)."""
    body = _body(text)
    if body is None:
        return None
    return reason_code(body.get("code") or body.get("error") or body.get("message"))


def to_request(
    status: int | None, text: str | None, reference: str, exchanges: tuple[Exchange, ...]
) -> OperatorResult:
    """The answer to a POST (requesttopay, transfer, refund)."""
    if status in (202, 409):
        # 409: a re-send under a reference MTN already holds; it was accepted before.
        return OperatorResult(Outcome.PENDING, operator_reference=reference, exchanges=exchanges)
    if status in (400, 401, 403, 404):
        # Refused as it stands (invalid, not authorised, not found): nothing was accepted,
        # and the same request would be refused again.
        code = error_code(text) or f"http_{status}"
        if status in (401, 403):
            code = f"operator_refused_credentials:{code}"
        return OperatorResult(Outcome.FAILED, reason=code, exchanges=exchanges)
    return unknown(exchanges)


def to_status(
    status: int | None, text: str | None, exchanges: tuple[Exchange, ...]
) -> OperatorResult:
    """The answer to a status query (GET …/{referenceId}), or a callback's body (200),
    with the transaction's amount and currency."""
    result = _status_outcome(status, text, exchanges)
    body = _body(text) if status == 200 else None
    if body is None:
        return result
    return stating(result, amount=body.get("amount"), currency=body.get("currency"))


def _status_outcome(
    status: int | None, text: str | None, exchanges: tuple[Exchange, ...]
) -> OperatorResult:
    if status == 404:
        return OperatorResult(Outcome.PENDING, unknown_reference=True, exchanges=exchanges)
    body = _body(text) if status == 200 else None
    state = str(body.get("status", "")).upper() if body else ""
    if body is None or not state:
        return unknown(exchanges)
    transaction_id = body.get("financialTransactionId")
    reference = str(transaction_id) if transaction_id else None
    if state == "SUCCESSFUL":
        return OperatorResult(Outcome.SUCCEEDED, operator_reference=reference, exchanges=exchanges)
    if state in _FAILED_STATUSES:
        reason = reason_code(body.get("reason")) or reason_code(state)
        return OperatorResult(
            Outcome.FAILED, operator_reference=reference, reason=reason, exchanges=exchanges
        )
    if state in _PENDING_STATUSES:
        return OperatorResult(Outcome.PENDING, exchanges=exchanges)
    return unknown(exchanges)
