"""The job queue in PostgreSQL: enqueued in the caller's transaction (the outbox), claimed
with FOR UPDATE SKIP LOCKED under a lease, completed in the handler's own transaction."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

NOTIFY_CHANNEL = "cauri_jobs"

_ENQUEUE = text(
    "WITH job AS (INSERT INTO jobs (kind, payload, run_at, max_attempts, created_at) "
    "VALUES (:kind, CAST(:payload AS jsonb), :run_at, :max_attempts, :now) RETURNING id) "
    "SELECT job.id, pg_notify('cauri_jobs', '') FROM job"
)

# One statement claims up to :limit jobs: due queued jobs first, then running jobs whose
# lease ran out (their worker died). CTEs are read on demand, so once `due` fills the limit
# `expired` locks nothing. A job whose lease ran out on its last attempt is failed, not rerun.
_CLAIM = text(
    "WITH due AS (SELECT id FROM jobs WHERE status = 'queued' AND run_at <= :now "
    "  ORDER BY run_at LIMIT :limit FOR UPDATE SKIP LOCKED), "
    "expired AS (SELECT id FROM jobs WHERE status = 'running' AND locked_until <= :now "
    "  ORDER BY locked_until LIMIT :limit FOR UPDATE SKIP LOCKED), "
    "picked AS (SELECT id FROM due UNION ALL SELECT id FROM expired LIMIT :limit) "
    "UPDATE jobs SET "
    "  status = CASE WHEN attempts < max_attempts THEN 'running' ELSE 'failed' END, "
    "  attempts = CASE WHEN attempts < max_attempts THEN attempts + 1 ELSE attempts END, "
    "  locked_until = CASE WHEN attempts < max_attempts "
    "    THEN CAST(:lease_until AS timestamptz) END, "
    "  last_error = CASE WHEN attempts < max_attempts THEN last_error "
    "    ELSE 'lease expired on the last attempt' END "
    "FROM picked WHERE jobs.id = picked.id "
    "RETURNING jobs.id, jobs.kind, jobs.payload, jobs.attempts, jobs.max_attempts, jobs.status"
)

_COMPLETE = text("DELETE FROM jobs WHERE id = :id AND attempts = :attempts")

_RETRY = text(
    "UPDATE jobs SET status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'queued' END, "
    "run_at = :run_at, locked_until = NULL, last_error = :error "
    "WHERE id = :id AND attempts = :attempts"
)


@dataclass(frozen=True)
class ClaimedJob:
    id: int
    kind: str
    payload: dict[str, Any]
    attempts: int
    max_attempts: int


class LeaseLost(Exception):
    """Another worker reclaimed the job after this one's lease ran out."""


async def enqueue(
    session: AsyncSession,
    kind: str,
    payload: dict[str, Any],
    *,
    now: datetime,
    delay: float = 0,
    max_attempts: int = 10,
) -> int:
    result = await session.execute(
        _ENQUEUE,
        {
            "kind": kind,
            "payload": json.dumps(payload),
            "run_at": now + timedelta(seconds=delay),
            "max_attempts": max_attempts,
            "now": now,
        },
    )
    return int(result.scalar_one())


async def claim(
    session: AsyncSession, *, now: datetime, limit: int, lease: float
) -> list[ClaimedJob]:
    rows = await session.execute(
        _CLAIM, {"now": now, "limit": limit, "lease_until": now + timedelta(seconds=lease)}
    )
    return [
        ClaimedJob(job_id, kind, payload, attempts, max_attempts)
        for job_id, kind, payload, attempts, max_attempts, status in rows
        if status == "running"
    ]


async def complete(session: AsyncSession, job: ClaimedJob) -> None:
    result = await session.execute(_COMPLETE, {"id": job.id, "attempts": job.attempts})
    if result.rowcount != 1:  # type: ignore[attr-defined]
        raise LeaseLost(job.id)


async def retry_later(
    session: AsyncSession, job: ClaimedJob, *, run_at: datetime, error: str
) -> None:
    await session.execute(
        _RETRY, {"id": job.id, "attempts": job.attempts, "run_at": run_at, "error": error[:2000]}
    )


def backoff(attempts: int) -> float:
    """Seconds before a failed job runs again: 2, 4, 8 … capped at five minutes."""
    return float(min(2**attempts, 300))
