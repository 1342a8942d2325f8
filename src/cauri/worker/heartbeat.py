"""A worker's sign of life, in the database: `GET /ready` wants a recent one. Written with the
database's clock, which `/ready` reads too (no two clocks to compare)."""

from __future__ import annotations

import os
import socket
import uuid

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cauri.kit.db import unit_of_work

# Seconds between two beats of a worker; `/ready` allows STALE_AFTER without one.
EVERY = 10.0
STALE_AFTER = 60.0

_BEAT = text(
    "INSERT INTO worker_heartbeats (worker_id, started_at, beat_at) VALUES (:id, now(), now()) "
    "ON CONFLICT (worker_id) DO UPDATE SET beat_at = now()"
)
_GONE = text(
    "DELETE FROM worker_heartbeats "
    "WHERE worker_id = :id OR beat_at < now() - make_interval(secs => :old)"
)


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


async def beat(sessionmaker: async_sessionmaker[AsyncSession], worker: str) -> None:
    async with unit_of_work(sessionmaker) as session:
        await session.execute(_BEAT, {"id": worker})


async def gone(sessionmaker: async_sessionmaker[AsyncSession], worker: str) -> None:
    """A worker that stops says so (and sweeps the rows of workers long dead)."""
    async with unit_of_work(sessionmaker) as session:
        await session.execute(_GONE, {"id": worker, "old": STALE_AFTER * 10})
