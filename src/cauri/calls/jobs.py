"""The status queries of operator requests still pending (handled in cauri.calls.tasks)."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.worker.jobs import JobKind


@dataclass(frozen=True)
class OperationJob:
    operation_id: str
    # A query of the schedule (it queues the next one) or one a callback prompted.
    scheduled: bool = True


POLL = JobKind("calls.poll", OperationJob)
