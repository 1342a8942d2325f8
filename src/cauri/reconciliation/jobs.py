"""The daily reconciliation's job (handled in cauri.reconciliation.tasks)."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.worker.jobs import JobKind


@dataclass(frozen=True)
class DayJob:
    day: str  # YYYY-MM-DD, UTC


DAILY = JobKind("reconciliation.daily", DayJob)
