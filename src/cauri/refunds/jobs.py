"""Job kinds the refunds domain queues (handled in cauri.refunds.tasks)."""

from __future__ import annotations

from cauri.disbursements.jobs import RowJob
from cauri.worker.jobs import JobKind

CHECK_STATUS = JobKind("refunds.check_status", RowJob)  # the simulator's delayed outcome
