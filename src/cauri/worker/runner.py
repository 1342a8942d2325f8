"""The worker: claims due jobs and runs each in its own transaction, many at once.

Woken by LISTEN/NOTIFY when a job is enqueued (on CAURI_DATABASE_LISTEN_URL's server); polls
as a fallback. Each lane (cauri.worker.lanes) is claimed within its own share of the
concurrency. A job is completed in the same transaction as its handler's writes, so a crash
(or a lost lease) either keeps both or neither. While a handler runs its lease is renewed
every third of CAURI_JOB_LEASE_SECONDS, so a slow handler is never run twice at once; a
worker killed mid-job stops renewing, the lease runs out and the job is claimed again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Mapping
from datetime import timedelta

import asyncpg
import structlog
from sqlalchemy.exc import SQLAlchemyError

from cauri.kit.db import engine_url, unit_of_work
from cauri.runtime import Runtime
from cauri.worker import heartbeat, lanes, queue
from cauri.worker.jobs import Handler

log = structlog.get_logger("cauri.worker")

# The listener's application_name, to find it in pg_stat_activity.
LISTENER_NAME = "cauri-worker-listen"

# A finished job frees its slot; the claim that fills it waits this long, so that the slots
# freed meanwhile are filled by the same claim (under a backlog jobs end every few ms, and a
# claim costs several round trips). A notification still wakes the worker at once.
CLAIM_AFTER_FINISH = 0.002


class Worker:
    def __init__(
        self,
        runtime: Runtime,
        handlers: Mapping[str, Handler],
        *,
        concurrency: int | None = None,
    ) -> None:
        self.runtime = runtime
        self.handlers = handlers
        self.concurrency = concurrency or runtime.settings.worker_concurrency
        self.slots = lanes.slots(self.concurrency)
        self._wake = asyncio.Event()
        self._running: dict[str, set[asyncio.Task[None]]] = {lane: set() for lane in self.slots}
        self._listening = True  # so that the first failure to listen is logged
        self.worker_id = heartbeat.worker_id()
        self._beat_at = -heartbeat.EVERY
        self._claim_soon: asyncio.TimerHandle | None = None

    async def run_due(self) -> int:
        """Claims what is due now and runs it to the end; returns how many jobs ran."""
        jobs = await self._claim(self.slots)
        await asyncio.gather(*(self._run(job) for job in jobs))
        return len(jobs)

    async def drain(self, max_rounds: int = 1000) -> int:
        """Runs due jobs until none is due (tests and `--once`)."""
        total = 0
        for _ in range(max_rounds):
            ran = await self.run_due()
            if not ran:
                break
            total += ran
        return total

    async def run_forever(self, stop: asyncio.Event) -> None:
        listener: asyncpg.Connection | None = None
        try:
            while not stop.is_set():
                await self._beat()
                if listener is None or listener.is_closed():
                    listener = await self._listen()
                # Cleared before claiming, so a job enqueued during the claim wakes the next round.
                self._wake.clear()
                free = {
                    lane: slots - len(self._running[lane])
                    for lane, slots in self.slots.items()
                    if slots > len(self._running[lane])
                }
                if free:
                    for job in await self._claim_or_log(free):
                        task = asyncio.create_task(self._run(job))
                        self._running[job.lane].add(task)
                        task.add_done_callback(functools.partial(self._finished, job.lane))
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.runtime.settings.worker_poll_interval):
                        await self._first(stop)
        finally:
            if listener is not None:
                await listener.close()
            with contextlib.suppress(SQLAlchemyError, OSError):
                await heartbeat.gone(self.runtime.sessionmaker, self.worker_id)
            running = [task for tasks in self._running.values() for task in tasks]
            if running:
                await asyncio.gather(*running, return_exceptions=True)

    async def _beat(self) -> None:
        """At most every heartbeat.EVERY seconds; a database that does not answer is the
        claim's to report."""
        now = asyncio.get_running_loop().time()
        if now - self._beat_at < heartbeat.EVERY:
            return
        with contextlib.suppress(SQLAlchemyError, OSError):
            await heartbeat.beat(self.runtime.sessionmaker, self.worker_id)
            self._beat_at = now

    async def _first(self, stop: asyncio.Event) -> None:
        waiters = [asyncio.create_task(self._wake.wait()), asyncio.create_task(stop.wait())]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    def _finished(self, lane: str, task: asyncio.Task[None]) -> None:
        self._running[lane].discard(task)
        if self._claim_soon is None:
            self._claim_soon = asyncio.get_running_loop().call_later(
                CLAIM_AFTER_FINISH, self._claim_now
            )

    def _claim_now(self) -> None:
        self._claim_soon = None
        self._wake.set()

    async def _listen(self) -> asyncpg.Connection | None:
        """A connection LISTENing for enqueued jobs, or None: then the worker only polls, and
        tries again on its next round (the listener is reopened if the server drops it)."""
        engine = self.runtime.engine
        listen_url = self.runtime.settings.database_listen_url
        # Read as the engine reads its own: every host of the URL, target_session_attrs.
        url = engine.url if listen_url is None else engine_url(listen_url)
        _, arguments = engine.dialect.create_connect_args(url)
        try:
            connection = await asyncpg.connect(
                **arguments,
                timeout=10,
                server_settings={"application_name": LISTENER_NAME},
            )
            await connection.add_listener(queue.NOTIFY_CHANNEL, lambda *_: self._wake.set())
        except (OSError, TimeoutError, asyncpg.PostgresError):
            if self._listening:
                log.warning("worker.listen_unavailable", fallback="polling")
            self._listening = False
            return None
        self._listening = True
        return connection

    async def _claim_or_log(self, limits: Mapping[str, int]) -> list[queue.ClaimedJob]:
        """A database outage must not end the worker: it logs and tries again next round."""
        try:
            return await self._claim(limits)
        except (OSError, SQLAlchemyError):
            log.exception("worker.claim_failed")
            return []

    async def _claim(self, limits: Mapping[str, int]) -> list[queue.ClaimedJob]:
        """Claims up to each lane's limit in one transaction; the grouped lanes come last,
        as their claim holds a lock until the transaction ends."""
        settings = self.runtime.settings
        claimed: list[queue.ClaimedJob] = []
        async with self.runtime.sessionmaker() as session, session.begin():
            for lane in sorted(limits, key=lambda lane: lane in lanes.GROUPED):
                claimed += await queue.claim(
                    session,
                    lane=lane,
                    now=self.runtime.clock.now(),
                    limit=limits[lane],
                    lease=settings.job_lease_seconds,
                    group_cap=settings.webhook_endpoint_concurrency
                    if lane in lanes.GROUPED
                    else None,
                )
        return claimed

    async def _run(self, job: queue.ClaimedJob) -> None:
        done = asyncio.Event()
        heartbeat = asyncio.create_task(self._keep_leased(job, done))
        try:
            await self._run_leased(job)
        finally:
            done.set()
            await heartbeat

    async def _keep_leased(self, job: queue.ClaimedJob, done: asyncio.Event) -> None:
        """Renews the job's lease every third of it until `done`; stops once the job was
        taken over (the handler's completion then finds it lost). Waited for, never
        cancelled, so no renewal is cut off in the middle of its query."""
        lease = self.runtime.settings.job_lease_seconds
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(lease / 3):
                    await done.wait()
                    return
            try:
                async with self.runtime.sessionmaker() as session, session.begin():
                    renewed = await queue.renew(
                        session,
                        job,
                        lease_until=self.runtime.clock.now() + timedelta(seconds=lease),
                    )
            except (OSError, SQLAlchemyError):
                log.exception("worker.lease_not_renewed", job_id=job.id, kind=job.kind)
                continue
            if not renewed:
                return

    async def _run_leased(self, job: queue.ClaimedJob) -> None:
        handler = self.handlers.get(job.kind)
        try:
            if handler is None:
                raise LookupError(f"no handler for job kind {job.kind!r}")
            # A handler may commit part way (the call protocol commits what it records
            # before an operator is called): the job completes in its last transaction.
            async with unit_of_work(self.runtime.sessionmaker) as session:
                await handler(session, self.runtime, job.payload)
                await queue.complete(session, job)
        except queue.LeaseLost:
            log.warning("worker.lease_lost", job_id=job.id, kind=job.kind)
        except Exception as exc:
            delay = queue.backoff(job.attempts)
            log.exception("worker.job_failed", job_id=job.id, kind=job.kind, retry_in=delay)
            try:
                async with self.runtime.sessionmaker() as session, session.begin():
                    await queue.retry_later(
                        session,
                        job,
                        run_at=self.runtime.clock.now() + timedelta(seconds=delay),
                        error=repr(exc),
                    )
            except (OSError, SQLAlchemyError):
                # Not recorded: the lease runs out and the job is claimed again.
                log.exception("worker.retry_not_recorded", job_id=job.id, kind=job.kind)
