"""What Wave's answers mean for Cauri (pure: no network). Sources in docs/OPERATORS.md,
"Wave".

A checkout session is paid when its `payment_status` is `succeeded` (its `checkout_status`
then `complete`); it fails when it expires unpaid (`checkout_status` `expired`); until then
the customer may still pay, even after a failed attempt (`last_payment_error`). A payout is
final when `succeeded` or `failed` (with `payout_error`); `reversed` means the money came
back. Errors are `{code, message}` with an HTTP status: 4xx refuse the request as it stands,
5xx and 429 say nothing for sure (unknown).
"""

from __future__ import annotations

from typing import Any

from cauri.operators.exchange import stating, unknown
from cauri.operators.protocol import Exchange, OperatorResult, Outcome


def snake(code: str) -> str:
    """Wave's codes (`insufficient-funds`) as Cauri keeps reasons (`insufficient_funds`)."""
    return code.strip().lower().replace("-", "_")


def error_code(body: Any) -> str | None:
    code = body.get("code") if isinstance(body, dict) else None
    return snake(code) if isinstance(code, str) and code else None


def refused(status: int | None, body: Any, exchanges: tuple[Exchange, ...]) -> OperatorResult:
    """A 4xx: nothing was accepted, and the same request would be refused again. 409 is
    not one: an idempotency key reused with another body, or one still in progress."""
    code = error_code(body) or f"http_{status}"
    if status in (401, 403):
        code = f"operator_refused_credentials:{code}"
    return OperatorResult(Outcome.FAILED, reason=code, exchanges=exchanges)


def is_refusal(status: int | None) -> bool:
    return status is not None and 400 <= status < 500 and status not in (408, 409, 429)


def to_session(session: dict[str, Any], exchanges: tuple[Exchange, ...]) -> OperatorResult:
    """A checkout session as Wave shows it (its answer to a creation or a query, or the
    `data` of a webhook event), with its amount and currency."""
    result = _session_outcome(session, exchanges)
    return stating(
        result, amount=session.get("amount"), currency=session.get("currency"), kind="collect"
    )


def _session_outcome(session: dict[str, Any], exchanges: tuple[Exchange, ...]) -> OperatorResult:
    transaction = session.get("transaction_id")
    operator_reference = str(transaction) if transaction else None
    if session.get("payment_status") == "succeeded":
        return OperatorResult(
            Outcome.SUCCEEDED, operator_reference=operator_reference, exchanges=exchanges
        )
    if session.get("checkout_status") == "expired":
        error = session.get("last_payment_error")
        code = error.get("code") if isinstance(error, dict) else None
        reason = (
            f"session_expired:{snake(code)}"
            if isinstance(code, str) and code
            else "session_expired"
        )
        return OperatorResult(Outcome.FAILED, reason=reason, exchanges=exchanges)
    if session.get("checkout_status") in ("open", "complete"):
        launch = session.get("wave_launch_url")
        return OperatorResult(
            Outcome.PENDING,
            operator_reference=str(session["id"]) if session.get("id") else None,
            redirect_url=launch if isinstance(launch, str) and launch else None,
            exchanges=exchanges,
        )
    return unknown(exchanges)


def to_payout(payout: dict[str, Any], exchanges: tuple[Exchange, ...]) -> OperatorResult:
    """A payout as Wave shows it, with what the recipient receives (`receive_amount`)."""
    result = _payout_outcome(payout, exchanges)
    amount, currency = payout.get("receive_amount"), payout.get("currency")
    return stating(result, amount=amount, currency=currency, kind="disburse")


def _payout_outcome(payout: dict[str, Any], exchanges: tuple[Exchange, ...]) -> OperatorResult:
    state = payout.get("status")
    operator_reference = str(payout["id"]) if payout.get("id") else None
    if state == "succeeded":
        return OperatorResult(
            Outcome.SUCCEEDED, operator_reference=operator_reference, exchanges=exchanges
        )
    if state in ("failed", "reversed"):
        error = payout.get("payout_error")
        code = error.get("error_code") if isinstance(error, dict) else None
        reason = snake(code) if isinstance(code, str) and code else f"payout_{state}"
        return OperatorResult(
            Outcome.FAILED,
            operator_reference=operator_reference,
            reason=reason,
            exchanges=exchanges,
        )
    if state == "processing":
        return OperatorResult(
            Outcome.PENDING, operator_reference=operator_reference, exchanges=exchanges
        )
    return unknown(exchanges)


def found(status: int | None, body: Any) -> list[dict[str, Any]] | None:
    """A search's results (`{"result": [...]}`); None when the answer says nothing."""
    if status != 200 or not isinstance(body, dict) or not isinstance(body.get("result"), list):
        return None
    return [item for item in body["result"] if isinstance(item, dict)]
