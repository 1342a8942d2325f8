"""`cauri-client trigger EVENT`: test resources made so that Cauri emits `EVENT`, with the test
numbers (`cauri_client.testing`): what a developer runs beside `listen` to see a receiver
handle each kind of event."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from cauri_client import testing
from cauri_client.client import Cauri
from cauri_client.errors import PaymentFailed, PayoutFailed

AMOUNT = 1000  # XOF, in every test resource made here
DESCRIPTION = "cauri-client trigger"


def _paid(cauri: Cauri) -> str:
    payment = cauri.payments.create(
        amount=AMOUNT,
        operator="mtn",
        phone_number=testing.number(testing.SUCCEEDS),
        description=DESCRIPTION,
    )
    return f"payment {payment.reference}"


def _refused(cauri: Cauri) -> str:
    try:
        cauri.payments.create(
            amount=AMOUNT,
            operator="mtn",
            phone_number=testing.number(testing.REFUSED),
            description=DESCRIPTION,
        )
    except PaymentFailed as refusal:
        return f"payment {refusal.reference}"
    raise RuntimeError("the test number that is refused was accepted")


def _refunded(cauri: Cauri) -> str:
    payment = cauri.payments.create(
        amount=AMOUNT, operator="mtn", phone_number=testing.number(testing.SUCCEEDS)
    )
    refund = cauri.refunds.create(payment.reference, reason=DESCRIPTION)
    return f"payment {payment.reference}, refund {refund.reference}"


def _paid_out(cauri: Cauri) -> str:
    _paid(cauri)  # a balance to send from
    payout = cauri.payouts.create(
        amount=AMOUNT // 2, operator="mtn", phone_number=testing.number(testing.SUCCEEDS)
    )
    return f"payout {payout.reference}"


def _payout_refused(cauri: Cauri) -> str:
    _paid(cauri)
    try:
        cauri.payouts.create(
            amount=AMOUNT // 2, operator="mtn", phone_number=testing.number(testing.REFUSED)
        )
    except PayoutFailed as refusal:
        return f"payout {refusal.reference}"
    raise RuntimeError("the test number that is refused was accepted")


def _tested(cauri: Cauri) -> str:
    sent = cauri.webhooks.send_test()
    return f"test event {sent.delivery_id}"


RECIPES: Mapping[str, Callable[[Cauri], str]] = {
    "payment.succeeded": _paid,
    "payment.failed": _refused,
    "refund.succeeded": _refunded,
    "payment.refunded": _refunded,
    "payout.succeeded": _paid_out,
    "payout.failed": _payout_refused,
    "webhook.test": _tested,
}


def trigger(cauri: Cauri, event: str) -> str:
    """Makes what emits `event`; says what was made. KeyError: no recipe for it."""
    return RECIPES[event](cauri)
