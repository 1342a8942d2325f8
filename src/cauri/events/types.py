"""Every event type the service emits, declared once (docs/API.md, "Events").

`events.service.Emission` refuses a type that is not here, so this tuple is the whole list:
the OpenAPI document's event description and tests/foundation/test_api_doc read it.
"""

from __future__ import annotations

EVENT_TYPES: tuple[str, ...] = (
    # A payment (or an instalment of a plan) reached its final state; `data`: the payment.
    "payment.succeeded",
    "payment.failed",
    # Refunds now cover a payment's whole amount; `data`: the payment.
    "payment.refunded",
    # A refund reached its final state; `data`: the refund.
    "refund.succeeded",
    "refund.failed",
    # A payout reached its final state; `data`: the payout.
    "payout.succeeded",
    "payout.failed",
    # Every item of a payout batch is refused or has a final payout; `data`: the batch,
    # without its items.
    "payout_batch.completed",
    # A checkout session completed (a payment succeeded) or expired; `data`: the session.
    "checkout_session.completed",
    "checkout_session.expired",
    # `POST /webhooks/test`; `data`: `{message, sent_at}`.
    "webhook.test",
)

_DECLARED = frozenset(EVENT_TYPES)


def declared(type: str) -> str:
    """`type`, once checked to be one of EVENT_TYPES."""
    if type not in _DECLARED:
        raise ValueError(f"undeclared event type {type!r}: add it to cauri.events.types")
    return type
