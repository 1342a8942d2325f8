"""The daily reconciliation's job (handled in cauri.reconciliation.tasks)."""

from __future__ import annotations

from cauri.worker.jobs import DayJob, JobKind

# The day is the platform's (CAURI_TIME_ZONE).
DAILY = JobKind("reconciliation.daily", DayJob)
