"""What pawaPay's answers mean for Cauri (pure: no network). Sources in docs/OPERATORS.md.

An initiation (deposit, payout, refund) answers HTTP 200 with `status` ACCEPTED,
DUPLICATE_IGNORED (our id was already accepted: for us the same fact) or REJECTED with a
`failureReason {failureCode, failureMessage}`: nothing was accepted. A status check answers
`{status: FOUND, data: {...}}` or `{status: NOT_FOUND}` (the id never reached pawaPay); the
payment's own `status` is final when COMPLETED or FAILED, in flight otherwise (ACCEPTED,
ENQUEUED, SUBMITTED, PROCESSING, IN_RECONCILIATION). A callback carries the same object as
`data`. Anything else (5xx, 429, a body we cannot read) says nothing for sure: unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cauri.operators.exchange import parsed, stating, unknown
from cauri.operators.protocol import Exchange, OperatorResult, Outcome

# Each kind of payment's id field, as the call protocol's action: a refund names its deposit
# too, so its own id is looked for first.
KINDS = (("refundId", "refund"), ("payoutId", "disburse"), ("depositId", "collect"))
IN_FLIGHT = frozenset({"ACCEPTED", "ENQUEUED", "SUBMITTED", "PROCESSING", "IN_RECONCILIATION"})


def failure_code(fields: dict[str, Any]) -> str | None:
    """pawaPay's failure code, as Cauri keeps reasons: snake_case (`payer_not_found`)."""
    reason = fields.get("failureReason")
    code = reason.get("failureCode") if isinstance(reason, dict) else None
    return code.strip().lower() if isinstance(code, str) and code.strip() else None


@dataclass(frozen=True)
class Initiation(OperatorResult):
    # pawaPay's `nextStep` for a deposit: GET_AUTH_URL when the customer approves on the
    # provider's page, whose address a status query gives.
    next_step: str | None = None


def to_initiation(
    status: int | None, text: str | None, reference: str, exchanges: tuple[Exchange, ...]
) -> Initiation:
    body = parsed(text)
    state = body.get("status") if isinstance(body, dict) else None
    if status == 200 and state in ("ACCEPTED", "DUPLICATE_IGNORED"):
        step = body.get("nextStep")
        return Initiation(
            Outcome.PENDING,
            operator_reference=reference,
            exchanges=exchanges,
            next_step=step if isinstance(step, str) else None,
        )
    if status == 200 and state == "REJECTED":
        reason = failure_code(body) or "rejected"
        return Initiation(Outcome.FAILED, reason=reason, exchanges=exchanges)
    if status in (400, 401, 403):
        # Refused as it stands (malformed, not authorised): nothing was accepted, and the
        # same request would be refused again.
        code = (failure_code(body) if isinstance(body, dict) else None) or f"http_{status}"
        if status in (401, 403):
            code = f"operator_refused_credentials:{code}"
        return Initiation(Outcome.FAILED, reason=code, exchanges=exchanges)
    return Initiation(Outcome.PENDING, unknown=True, exchanges=exchanges)


def to_payment(fields: dict[str, Any], exchanges: tuple[Exchange, ...]) -> OperatorResult:
    """A deposit, payout or refund as pawaPay shows it (a status check's `data`, a callback),
    with what it says the payment is: its kind, amount and currency."""
    return stating(
        _outcome(fields, exchanges),
        amount=fields.get("amount"),
        currency=fields.get("currency"),
        kind=next((kind for field, kind in KINDS if isinstance(fields.get(field), str)), None),
    )


def _outcome(fields: dict[str, Any], exchanges: tuple[Exchange, ...]) -> OperatorResult:
    state = fields.get("status")
    transaction = fields.get("providerTransactionId")
    operator_reference = str(transaction) if transaction else None
    if state == "COMPLETED":
        return OperatorResult(
            Outcome.SUCCEEDED, operator_reference=operator_reference, exchanges=exchanges
        )
    if state == "FAILED":
        return OperatorResult(
            Outcome.FAILED,
            operator_reference=operator_reference,
            reason=failure_code(fields) or "failed",
            exchanges=exchanges,
        )
    if state in IN_FLIGHT:
        redirect = fields.get("authorizationUrl")
        return OperatorResult(
            Outcome.PENDING,
            redirect_url=redirect if isinstance(redirect, str) and redirect else None,
            exchanges=exchanges,
        )
    return unknown(exchanges)


def to_status(
    status: int | None, text: str | None, exchanges: tuple[Exchange, ...]
) -> OperatorResult:
    body = parsed(text)
    if status != 200 or not isinstance(body, dict):
        return unknown(exchanges)
    if body.get("status") == "NOT_FOUND":
        return OperatorResult(Outcome.PENDING, unknown_reference=True, exchanges=exchanges)
    data = body.get("data")
    if body.get("status") != "FOUND" or not isinstance(data, dict):
        return unknown(exchanges)
    return to_payment(data, exchanges)
