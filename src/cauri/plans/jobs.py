"""Job kinds the plans domain queues. The refund of a late instalment is paid by the refunds
domain, which handles that kind (cauri.refunds.tasks)."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.worker.jobs import JobKind


@dataclass(frozen=True)
class PlanJob:
    plan_id: str


@dataclass(frozen=True)
class InstalmentJob:
    payment_id: str


EXPIRE = JobKind("plans.expire", PlanJob)  # due at the plan's expires_at
REFUND = JobKind("plans.refund", PlanJob)  # starts a cancelling plan's refund
REFUND_STATUS = JobKind("plans.refund_status", PlanJob)  # the simulator's delayed outcome
REFUND_LATE_INSTALMENT = JobKind("plans.refund_late_instalment", InstalmentJob)
