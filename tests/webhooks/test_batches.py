"""Deliveries claimed and read together: two workers never deliver one job twice, and a
failed attempt in a batch costs the others nothing."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
from sqlalchemy import event, text

from cauri.jobs import handlers
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.support import free_port, make_merchant, scalar
from tests.webhooks.builders import deliveries, send_test, set_endpoint
from tests.webhooks.receiver import Answer, Receiver


async def test_two_workers_deliver_each_job_of_their_batches_once(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    per_endpoint, endpoints = 25, 4
    with Receiver(keep_alive=True) as receiver:
        merchants = [await make_merchant(runtime, name=f"M{n}") for n in range(endpoints)]
        for merchant in merchants:
            await set_endpoint(client, merchant, receiver.url)
        stop = asyncio.Event()
        workers = [
            asyncio.create_task(Worker(runtime, handlers()).run_forever(stop)) for _ in range(2)
        ]
        try:
            made = [
                (await send_test(client, merchant))["delivery_id"]
                for _ in range(per_endpoint)
                for merchant in merchants
            ]
            await receiver.wait_for(len(made), within=30)
            await asyncio.sleep(0.3)  # room for a duplicate to show up, if there were one
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*workers), timeout=30)

    sent = Counter(request.headers["x-service-delivery"] for request in receiver.requests)
    assert set(sent) == set(made)
    assert set(sent.values()) == {1}
    assert await scalar(runtime, "SELECT count(*) FROM webhook_attempts") == len(made)
    assert await scalar(runtime, "SELECT count(*) FROM jobs") == 0
    for merchant in merchants:
        assert {e["status"] for e in await deliveries(client, merchant)} == {"success"}


async def test_a_failed_attempt_in_a_batch_loses_none_of_the_others(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    # 64 slots: the test lane's eighth, 8, claims all six deliveries at once.
    worker = Worker(runtime, handlers(), concurrency=64)
    with Receiver() as fine, Receiver(Answer(500)) as failing:
        ok, refusing, erring = [await make_merchant(runtime, name=n) for n in ("A", "B", "C")]
        await set_endpoint(client, ok, fine.url)
        await set_endpoint(client, refusing, failing.url)
        await set_endpoint(client, erring, f"http://127.0.0.1:{free_port()}/hooks")
        for _ in range(2):
            for merchant in (ok, refusing, erring):
                await send_test(client, merchant)

        reads: list[str] = []

        def count_reads(*args: object) -> None:
            statement = str(args[2])
            if statement.startswith("SELECT d.id, d.url"):
                reads.append(statement)

        event.listen(runtime.engine.sync_engine, "before_cursor_execute", count_reads)
        try:
            assert await worker.drain() == 6
        finally:
            event.remove(runtime.engine.sync_engine, "before_cursor_execute", count_reads)

    # Claimed together, read in one query.
    assert len(reads) == 1
    assert len(fine.requests) == 2 and len(failing.requests) == 2
    assert [(e["status"], e["attempts"]) for e in await deliveries(client, ok)] == [
        ("success", 1)
    ] * 2
    for merchant in (refusing, erring):
        assert [(e["status"], e["attempts"]) for e in await deliveries(client, merchant)] == [
            ("pending", 1)
        ] * 2
    assert await scalar(runtime, "SELECT count(*) FROM webhook_attempts") == 6
    # Each failed delivery has its next attempt queued, on the schedule; nothing else is left.
    async with runtime.sessionmaker() as session:
        retries = (
            await session.execute(
                text("SELECT payload ->> 'attempt', run_at - created_at FROM jobs ORDER BY id")
            )
        ).all()
    delay = runtime.settings.retry_delays[0]
    assert [(attempt, gap.total_seconds()) for attempt, gap in retries] == [("2", delay)] * 4
    failures = await scalar(
        runtime, "SELECT sum(consecutive_failures) FROM webhook_endpoints WHERE url IS NOT NULL"
    )
    assert failures == 4
