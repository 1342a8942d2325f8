"""Job kinds the checkout domain queues (handled in cauri.checkout.tasks)."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.worker.jobs import JobKind


@dataclass(frozen=True)
class SessionJob:
    reference: str


@dataclass(frozen=True)
class AttemptJob:
    payment_id: str


# A session still open at its `expires_at`.
EXPIRE = JobKind("checkout.expire", SessionJob)
# An attempt that succeeded once its session was no longer open: refunded in full.
REFUND_LATE_ATTEMPT = JobKind("checkout.refund_late_attempt", AttemptJob)
