"""Job kinds the payout batches domain queues (handled in cauri.payout_batches.tasks)."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.worker.jobs import JobKind


@dataclass(frozen=True)
class BatchJob:
    reference: str


# Makes the batch's items into payouts, in order, each in its own transaction.
PROCESS = JobKind("payout_batches.process", BatchJob)
# A batched payout ended: the batch completes if that was its last item to end.
CHECK_COMPLETION = JobKind("payout_batches.check_completion", BatchJob)
