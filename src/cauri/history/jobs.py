"""The history's job (handled in cauri.history.tasks)."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.worker.jobs import JobKind


@dataclass(frozen=True)
class DayJob:
    day: str  # YYYY-MM-DD, UTC: the run's, so that each day is queued once


MONTHS_AHEAD = JobKind("history.months_ahead", DayJob)
