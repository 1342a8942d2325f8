"""What the lower layers are handed at start-up, in one place a reader can see: which domain
takes an operator's answer about each kind of row (the call protocol imports no domain), and
what becomes of an instalment's money and of a checkout session's attempt (payments import
neither plans nor checkout), and of a batched payout's end (payouts import no batch). Every
composition root runs `wire()` before it serves: the app, the worker's table (cauri.jobs),
the CLI's commands."""

from __future__ import annotations

from cauri.calls import service as calls
from cauri.checkout.service import checkout_sessions
from cauri.payments import service as payments
from cauri.payout_batches.service import payout_batches
from cauri.payouts import service as payouts
from cauri.plans import settlement
from cauri.refunds import service as refunds


def wire() -> None:
    """Idempotent."""
    calls.wire([payments.SUBJECT, payouts.SUBJECT, refunds.SUBJECT, settlement.REFUND_SUBJECT])
    payments.payments.instalment_settled = settlement.instalment_settled
    payments.payments.attempt_settled = checkout_sessions.attempt_settled
    payouts.payouts.batched_payout_ended = payout_batches.payout_ended
