"""The job queue in PostgreSQL: enqueued in the caller's transaction (the outbox), claimed
lane by lane with FOR UPDATE SKIP LOCKED under a lease that the worker renews while the
handler runs, completed in the handler's own transaction."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    CTE,
    ColumnElement,
    DateTime,
    FromClause,
    Integer,
    Subquery,
    Table,
    Text,
    exists,
    func,
    literal_column,
    select,
    text,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import TypeEngine

from cauri.kit.binds import Binds, Part, inserted
from cauri.models import Job
from cauri.worker import lanes

NOTIFY_CHANNEL = "cauri_jobs"

_JOBS = cast(Table, Job.__table__)


@dataclass(frozen=True)
class NewJob:
    """A job as `queued` writes it (`job_values`)."""

    kind: str
    lane: str
    group: str | None
    payload: dict[str, Any]
    run_at: datetime
    max_attempts: int
    now: datetime


# One new job (its CTE returns the job's id), in another domain's statement.
Queued = Part[NewJob]


def _binds() -> Binds[NewJob]:
    return Binds(
        NewJob,
        kind=Text(),
        lane=Text(),
        group=Text(),
        payload=cast(TypeEngine[Any], Job.payload.type),
        run_at=DateTime(timezone=True),
        max_attempts=Integer(),
        now=DateTime(timezone=True),
    )


def _queued(source: FromClause | None, binds: Binds[NewJob]) -> Queued:
    row = {
        "kind": binds["kind"],
        "lane": binds["lane"],
        "group_key": binds["group"],
        "payload": binds["payload"],
        "run_at": binds["run_at"],
        "max_attempts": binds["max_attempts"],
        "created_at": binds["now"],
    }
    return Part(inserted(_JOBS, row, source), binds)


def queued(source: FromClause | None) -> Queued:
    """One job, written once per row of `source`, a FROM item of the caller's statement
    (None: once; a `source` without rows: none). Another domain's statement takes it to
    queue a job in the same round trip as the row the job acts on, and wakes the worker
    with `woken_by`."""
    return _queued(source, _binds())


# Selected from a `job` CTE, so that the worker wakes when it wrote a row.
NOTIFY: ColumnElement[Any] = func.pg_notify(
    literal_column(f"'{NOTIFY_CHANNEL}'"), literal_column("''")
)


def woken_by(job: CTE) -> Subquery:
    """A FROM item of one row that wakes the worker, through NOTIFY, when `job` wrote one:
    taken once in the caller's last FROM, a volatile call PostgreSQL never drops."""
    woken = select(NOTIFY).select_from(job).subquery("woken")
    return select(func.count()).select_from(woken).subquery("notified")


_ENQUEUED = queued(None)
_ENQUEUE = select(_ENQUEUED.cte.c.id, NOTIFY)

# The same, unless a job of that kind with that payload is already queued; callers of one
# payload take turns (a transaction-scoped advisory lock on it) so that two at once cannot
# both find none. `status = 'queued'` stays a literal: the partial index of queued jobs
# answers it.
_LOCK_PAYLOAD = text(
    "SELECT pg_advisory_xact_lock(7244, hashtext(CAST(:kind AS text) || CAST(:payload AS text)))"
)
_ONCE_BINDS = _binds()
_FRESH = (
    select(literal_column("1"))
    .where(
        ~exists().where(
            _JOBS.c.lane == _ONCE_BINDS["lane"],
            _JOBS.c.kind == _ONCE_BINDS["kind"],
            _JOBS.c.status == literal_column("'queued'"),
            _JOBS.c.payload == _ONCE_BINDS["payload"],
        )
    )
    .cte()
)
_ENQUEUED_ONCE = _queued(_FRESH, _ONCE_BINDS)
_ENQUEUE_ONCE = select(_ENQUEUED_ONCE.cte.c.id, NOTIFY)

# What a claim does to the jobs it picked: runs them under a lease, or fails those whose
# lease ran out on their last attempt (they are not rerun).
_TAKE_PICKED = (
    "UPDATE jobs SET "
    "  status = CASE WHEN attempts < max_attempts THEN 'running' ELSE 'failed' END, "
    "  attempts = CASE WHEN attempts < max_attempts THEN attempts + 1 ELSE attempts END, "
    "  locked_until = CASE WHEN attempts < max_attempts "
    "    THEN CAST(:lease_until AS timestamptz) END, "
    "  last_error = CASE WHEN attempts < max_attempts THEN last_error "
    "    ELSE 'lease expired on the last attempt' END "
    "FROM picked WHERE jobs.id = picked.id "
    "RETURNING jobs.id, jobs.kind, jobs.lane, jobs.payload, jobs.attempts, jobs.max_attempts, "
    "  jobs.status"
)

# One statement claims up to :limit jobs of one lane: due queued jobs first, then running
# jobs whose lease ran out (their worker died). CTEs are read on demand, so once `due` fills
# the limit `expired` locks nothing.
# Constant text (S608: no input is ever concatenated into these statements).
_CLAIM = text(
    "WITH due AS (SELECT id FROM jobs WHERE lane = :lane AND status = 'queued' "  # noqa: S608
    "  AND run_at <= :now ORDER BY run_at LIMIT :limit FOR UPDATE SKIP LOCKED), "
    "expired AS (SELECT id FROM jobs WHERE lane = :lane AND status = 'running' "
    "  AND locked_until <= :now ORDER BY locked_until LIMIT :limit FOR UPDATE SKIP LOCKED), "
    "picked AS (SELECT id FROM due UNION ALL SELECT id FROM expired LIMIT :limit) " + _TAKE_PICKED
)

# Claims of a grouped lane are serialized (a transaction-scoped advisory lock per lane), so
# the running jobs each claim counts include every other worker's claims: no group ever has
# more than :group_cap jobs under a live lease.
_LOCK_LANE = text("SELECT pg_advisory_xact_lock(7243, hashtext(:lane))")

# The same claim, taking from each group only what its cap leaves: the due jobs of each
# group are ranked, so a group with a long backlog hides no other group's jobs. Driven by
# the index of queued jobs by group (ix_jobs_queued_group): the groups with a queued job are
# found by skipping from one to the next (a recursive CTE), and each gives at most its cap of
# oldest due jobs, since a job further back in its group could not be taken anyway. A claim
# thus reads O(groups × cap) index entries, not the whole backlog of the lane. Jobs whose
# lease ran out count in their group's ranking as before; jobs of no group are taken
# oldest first.
_CLAIM_CAPPED = text(
    "WITH RECURSIVE grp AS ((SELECT group_key FROM jobs WHERE lane = :lane "  # noqa: S608
    "  AND status = 'queued' AND group_key IS NOT NULL ORDER BY group_key LIMIT 1) "
    "  UNION ALL SELECT (SELECT j.group_key FROM jobs j WHERE j.lane = :lane "
    "  AND j.status = 'queued' AND j.group_key > grp.group_key ORDER BY j.group_key LIMIT 1) "
    "  FROM grp WHERE grp.group_key IS NOT NULL), "
    "busy AS (SELECT group_key, count(*) AS running FROM jobs WHERE lane = :lane "
    "  AND status = 'running' AND locked_until > :now AND group_key IS NOT NULL "
    "  GROUP BY group_key), "
    "candidates AS (SELECT due.id, grp.group_key, due.since FROM grp CROSS JOIN LATERAL "
    "  (SELECT id, run_at AS since FROM jobs WHERE lane = :lane AND status = 'queued' "
    "  AND group_key = grp.group_key AND run_at <= :now ORDER BY run_at, id "
    "  LIMIT :group_cap) AS due "
    "  UNION ALL (SELECT id, group_key, run_at FROM jobs WHERE lane = :lane "
    "  AND status = 'queued' AND group_key IS NULL AND run_at <= :now ORDER BY run_at "
    "  LIMIT :limit) "
    "  UNION ALL SELECT id, group_key, locked_until FROM jobs WHERE lane = :lane "
    "  AND status = 'running' AND locked_until <= :now), "
    "ranked AS (SELECT id, group_key, since, "
    "  row_number() OVER (PARTITION BY group_key ORDER BY since, id) AS place FROM candidates), "
    "allowed AS (SELECT ranked.id, ranked.since FROM ranked "
    "  LEFT JOIN busy ON busy.group_key = ranked.group_key "
    "  WHERE ranked.group_key IS NULL OR ranked.place + coalesce(busy.running, 0) <= :group_cap "
    "  ORDER BY ranked.since LIMIT :limit), "
    "picked AS (SELECT jobs.id FROM jobs JOIN allowed ON allowed.id = jobs.id "
    "  FOR UPDATE OF jobs SKIP LOCKED) " + _TAKE_PICKED
)

# Brings a queued job forward (never back), and says whether the job is queued or running:
# a job that is neither (it failed, or was never queued) is not there to run.
_HASTEN = text(
    "WITH moved AS (UPDATE jobs SET run_at = LEAST(run_at, :now) WHERE lane = :lane "
    "  AND kind = :kind AND status = 'queued' AND payload = CAST(:payload AS jsonb) "
    "  RETURNING id) "
    "SELECT EXISTS (SELECT FROM moved) OR EXISTS (SELECT FROM jobs WHERE lane = :lane "
    "  AND kind = :kind AND status = 'running' AND payload = CAST(:payload AS jsonb)), "
    "  pg_notify('cauri_jobs', '')"
)

_RENEW = text(
    "UPDATE jobs SET locked_until = :lease_until "
    "WHERE id = :id AND attempts = :attempts AND status = 'running'"
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
    lane: str
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
    livemode: bool,
    now: datetime,
    delay: float = 0,
    max_attempts: int = 10,
    group: str | None = None,
    family: lanes.Family = lanes.Family.MONEY,
) -> int:
    """Inserts a job in the caller's transaction; its lane follows from `family` and
    `livemode`. Jobs of one `group` run at most CAURI_WEBHOOK_ENDPOINT_CONCURRENCY at once.
    Domains queue through their typed kinds (cauri.worker.jobs)."""
    job = job_values(
        kind,
        payload,
        livemode=livemode,
        now=now,
        delay=delay,
        max_attempts=max_attempts,
        group=group,
        family=family,
    )
    result = await session.execute(_ENQUEUE, _ENQUEUED.values(job))
    return int(result.scalar_one())


async def enqueue_once(
    session: AsyncSession,
    kind: str,
    payload: dict[str, Any],
    *,
    livemode: bool,
    now: datetime,
    family: lanes.Family = lanes.Family.MONEY,
    delay: float = 0,
) -> bool:
    """Queues a job due after `delay` seconds unless one of `kind` with exactly `payload` is
    queued already (a running one does not count: it may have looked before what prompts this
    one); whether it queued one. In the caller's transaction."""
    job = job_values(kind, payload, livemode=livemode, now=now, delay=delay, family=family)
    await session.execute(_LOCK_PAYLOAD, {"kind": kind, "payload": json.dumps(payload)})
    return (await session.execute(_ENQUEUE_ONCE, _ENQUEUED_ONCE.values(job))).first() is not None


def job_values(
    kind: str,
    payload: dict[str, Any],
    *,
    livemode: bool,
    now: datetime,
    delay: float = 0,
    max_attempts: int = 10,
    group: str | None = None,
    family: lanes.Family = lanes.Family.MONEY,
) -> NewJob:
    """The values of `queued` (see `enqueue`)."""
    return NewJob(
        kind=kind,
        lane=lanes.lane_of(family, livemode=livemode),
        group=group,
        payload=payload,
        run_at=now + timedelta(seconds=delay),
        max_attempts=max_attempts,
        now=now,
    )


async def hasten(
    session: AsyncSession,
    kind: str,
    payload: dict[str, Any],
    *,
    livemode: bool,
    now: datetime,
    family: lanes.Family = lanes.Family.MONEY,
) -> bool:
    """Makes the queued job of `kind` with exactly `payload` due at `now`, in the caller's
    transaction; whether that job is queued or running (False: queue it anew)."""
    result = await session.execute(
        _HASTEN,
        {
            "lane": lanes.lane_of(family, livemode=livemode),
            "kind": kind,
            "payload": json.dumps(payload),
            "now": now,
        },
    )
    return bool(result.scalar_one())


async def claim(
    session: AsyncSession,
    *,
    lane: str,
    now: datetime,
    limit: int,
    lease: float,
    group_cap: int | None = None,
) -> list[ClaimedJob]:
    """Up to `limit` jobs of `lane`, leased until now + `lease`; with `group_cap`, no more
    jobs of one group than the cap run at once, across every worker."""
    parameters: dict[str, Any] = {
        "lane": lane,
        "now": now,
        "limit": limit,
        "lease_until": now + timedelta(seconds=lease),
    }
    if group_cap is None:
        rows = await session.execute(_CLAIM, parameters)
    else:
        await session.execute(_LOCK_LANE, {"lane": lane})
        rows = await session.execute(_CLAIM_CAPPED, {**parameters, "group_cap": group_cap})
    return [
        ClaimedJob(job_id, kind, job_lane, payload, attempts, max_attempts)
        for job_id, kind, job_lane, payload, attempts, max_attempts, status in rows
        if status == "running"
    ]


async def renew(session: AsyncSession, job: ClaimedJob, *, lease_until: datetime) -> bool:
    """Extends the lease of a job still running; False once another worker took it over."""
    result = await session.execute(
        _RENEW, {"id": job.id, "attempts": job.attempts, "lease_until": lease_until}
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


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
