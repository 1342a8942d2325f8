"""The job of one delivery attempt (handled in cauri.webhooks.tasks)."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.worker.jobs import JobKind
from cauri.worker.lanes import Family


@dataclass(frozen=True)
class Attempt:
    delivery_id: str
    attempt: int


# Queued by `cauri.events.service.emit` in the transaction of the event, and by the
# delivery's own retries.
DELIVER = JobKind("webhooks.deliver", Attempt, Family.WEBHOOKS)
