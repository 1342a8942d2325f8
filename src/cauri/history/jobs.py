"""The history's job (handled in cauri.history.tasks)."""

from __future__ import annotations

from cauri.worker.jobs import DayJob, JobKind

# The day is UTC's.
MONTHS_AHEAD = JobKind("history.months_ahead", DayJob)
