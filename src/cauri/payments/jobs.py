"""Job kinds the payments domain queues (handled in cauri.payments.tasks)."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.worker.jobs import JobKind


@dataclass(frozen=True)
class PaymentJob:
    payment_id: str


# The simulator's delayed outcome of a pending test payment.
CHECK_STATUS = JobKind("payments.check_status", PaymentJob)
# A card payment still pending after CAURI_CARD_PAYMENT_TTL.
EXPIRE_CARD = JobKind("payments.expire_card", PaymentJob)
