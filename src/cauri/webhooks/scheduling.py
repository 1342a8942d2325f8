"""The job of one delivery attempt: in its merchant's webhook lane, grouped by endpoint so
that one endpoint never runs more than CAURI_WEBHOOK_ENDPOINT_CONCURRENCY attempts at once.

An endpoint here is a merchant's environment: its configured URL and the `callback_url` of
its payments share one group and one circuit breaker."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.webhooks import jobs
from cauri.worker.queue import NewJob


def endpoint_group(merchant_id: str, livemode: bool) -> str:
    return f"{merchant_id}/{'live' if livemode else 'test'}"


async def enqueue_attempt(
    session: AsyncSession,
    *,
    delivery_id: uuid.UUID,
    attempt: int,
    merchant_id: str,
    livemode: bool,
    now: datetime,
    delay: float = 0,
) -> None:
    await jobs.DELIVER.enqueue(
        session,
        jobs.Attempt(str(delivery_id), attempt),
        livemode=livemode,
        group=endpoint_group(merchant_id, livemode),
        now=now,
        delay=delay,
    )


def first_attempt(
    *, delivery_id: uuid.UUID, merchant_id: str, livemode: bool, now: datetime
) -> NewJob:
    """The job of a new delivery's first attempt, as values of `queue.queued`: the event's
    statement queues it with the delivery (see `cauri.events.service.emitted`)."""
    return next_attempt(
        delivery_id=delivery_id, attempt=1, merchant_id=merchant_id, livemode=livemode, now=now
    )


def next_attempt(
    *,
    delivery_id: uuid.UUID,
    attempt: int,
    merchant_id: str,
    livemode: bool,
    now: datetime,
    delay: float = 0,
) -> NewJob:
    """The job of an attempt, as values of `queue.queued`."""
    return jobs.DELIVER.values(
        jobs.Attempt(str(delivery_id), attempt),
        livemode=livemode,
        group=endpoint_group(merchant_id, livemode),
        now=now,
        delay=delay,
    )


async def attempt_now(
    session: AsyncSession,
    *,
    delivery_id: uuid.UUID,
    attempt: int,
    merchant_id: str,
    livemode: bool,
    now: datetime,
) -> None:
    """Makes the attempt due now: its queued job is brought forward, or queued when there is
    none (a failed delivery has none); one already under way is left to finish, so that the
    endpoint never gets the same attempt twice."""
    found = await jobs.DELIVER.hasten(
        session, jobs.Attempt(str(delivery_id), attempt), livemode=livemode, now=now
    )
    if not found:
        await enqueue_attempt(
            session,
            delivery_id=delivery_id,
            attempt=attempt,
            merchant_id=merchant_id,
            livemode=livemode,
            now=now,
        )
