"""Job kinds, typed: a kind's name, the lane family it runs in and the shape of its payload,
declared by the domain that queues it; the handler that runs it is paired with it in that
domain's `tasks.py`, and the service's composition root (`cauri.jobs`) gathers the pairs.
The worker itself knows no domain."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.models import Job as JobRow
from cauri.runtime import Runtime
from cauri.worker import queue
from cauri.worker.lanes import Family

P = TypeVar("P")
PENDING = ("queued", "running")

# What the worker runs: a job's payload as stored (JSON).
Handler = Callable[[AsyncSession, Runtime, dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class DayJob:
    """The payload of a job run once a day (its day, YYYY-MM-DD): queued once per day."""

    day: str


@dataclass(frozen=True)
class JobKind(Generic[P]):
    name: str
    payload: type[P]  # a frozen dataclass of JSON values
    family: Family = Family.MONEY

    async def enqueue(
        self,
        session: AsyncSession,
        payload: P,
        *,
        livemode: bool,
        now: datetime,
        delay: float = 0,
        group: str | None = None,
    ) -> int:
        """In the caller's transaction (the outbox)."""
        return await queue.enqueue(
            session,
            self.name,
            dataclasses.asdict(payload),  # type: ignore[call-overload]
            family=self.family,
            livemode=livemode,
            now=now,
            delay=delay,
            group=group,
        )

    async def enqueue_once(
        self, session: AsyncSession, payload: P, *, livemode: bool, now: datetime, delay: float = 0
    ) -> bool:
        """Due after `delay`, unless the same job is queued already (queue.enqueue_once)."""
        return await queue.enqueue_once(
            session,
            self.name,
            dataclasses.asdict(payload),  # type: ignore[call-overload]
            family=self.family,
            livemode=livemode,
            now=now,
            delay=delay,
        )

    async def pending(self, session: AsyncSession) -> bool:
        """Whether a job of this kind is queued or running: a chain of scheduled runs (one
        queues the next) is started only when none is."""
        found = await session.scalar(
            select(exists().where(JobRow.kind == self.name, JobRow.status.in_(PENDING)))
        )
        return bool(found)

    def values(
        self,
        payload: P,
        *,
        livemode: bool,
        now: datetime,
        group: str | None = None,
        delay: float = 0,
    ) -> queue.NewJob:
        """The values of `queue.queued`: the job queued by another domain's statement, in
        the caller's transaction."""
        return queue.job_values(
            self.name,
            dataclasses.asdict(payload),  # type: ignore[call-overload]
            family=self.family,
            livemode=livemode,
            now=now,
            delay=delay,
            group=group,
        )

    async def hasten(
        self, session: AsyncSession, payload: P, *, livemode: bool, now: datetime
    ) -> bool:
        """Makes the job with `payload` due now; False when no such job waits or runs."""
        return await queue.hasten(
            session,
            self.name,
            dataclasses.asdict(payload),  # type: ignore[call-overload]
            family=self.family,
            livemode=livemode,
            now=now,
        )


@dataclass(frozen=True)
class Job(Generic[P]):
    """A kind and the handler that runs it."""

    kind: JobKind[P]
    handle: Callable[[AsyncSession, Runtime, P], Awaitable[None]]

    async def run(self, session: AsyncSession, runtime: Runtime, stored: dict[str, Any]) -> None:
        await self.handle(session, runtime, self.kind.payload(**stored))
