"""Job kinds the payouts domain queues (handled in cauri.payouts.tasks)."""

from __future__ import annotations

from cauri.disbursements.jobs import RowJob
from cauri.worker.jobs import JobKind

CHECK_STATUS = JobKind("payouts.check_status", RowJob)  # the simulator's delayed outcome
SEND_APPROVED = JobKind("payouts.send_approved", RowJob)  # after `cauri payouts approve`
