"""Job kinds the plans domain queues. The refund of a late instalment is paid by the refunds
domain, which handles that kind (cauri.refunds.tasks)."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.disbursements.jobs import RowJob
from cauri.worker.jobs import JobKind


@dataclass(frozen=True)
class PlanJob:
    plan_id: str


@dataclass(frozen=True)
class InstalmentJob:
    payment_id: str


EXPIRE = JobKind("plans.expire", PlanJob)  # due at the plan's expires_at
REFUND = JobKind("plans.refund", PlanJob)  # starts a cancelling plan's refund
# The simulator's delayed outcome of a plan refund, keyed by the PlanRefund's reference (jobs
# queued with a plan_id before plan refunds were rows: rewritten by migration 0011).
REFUND_STATUS = JobKind("plans.refund_status", RowJob)
REFUND_LATE_INSTALMENT = JobKind("plans.refund_late_instalment", InstalmentJob)
