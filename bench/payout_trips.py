"""The SQL round trips of one `POST /api/v1/payouts`, and those made while the merchant's
balance row is locked (bench/payouts.sh trips; see bench/README.md).

Against the database of `CAURI_DATABASE_URL` (migrated, the merchant of `--key` credited),
sends `-n` test payouts to a number ending in 0000 (paid at once) one after another through
`httpx.ASGITransport` into the app, in-process, and records every statement with its time:
those SQLAlchemy sends (`before_cursor_execute`) and those run past it as prepared
statements (`cauri.kit.prepared.Prepared`, wrapped here). Prints the statements of the last
payout, the round trips per payout (BEGIN and COMMIT on top when SQLAlchemy opened a
transaction; a prepared statement run before it commits on its own), the round trips from
the statement that locks the balance's row (the call to `ledger_debit`) to the commit that
releases it, and how long the row stays locked with a single client (from that statement's
start to its end when it commits on its own, else to the answer: median and minimum).
Concurrent payouts of one merchant wait for that lock one after the other, so its hold time
bounds their throughput: at most 1 / hold time payouts per second, whatever the CPU.

    CAURI_DATABASE_URL=postgresql://... uv run python bench/payout_trips.py --key sk_test_...
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import httpx
import structlog
from sqlalchemy import event

from cauri.app import create_app
from cauri.config import get_settings
from cauri.kit.db import as_asyncpg
from cauri.kit.prepared import Prepared
from cauri.runtime import Runtime

LOCKS = "ledger_debit("


@dataclass(frozen=True)
class Trip:
    started: float
    sql: str
    ended: float | None  # a prepared statement's end; None: SQLAlchemy's (in a transaction)


def first_words(statement: str) -> str:
    return " ".join(statement.split()[:4])[:70]


async def run(args: argparse.Namespace) -> None:
    # The access line of each request would bury the figures.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    settings = get_settings().model_copy(update={"rate_limit": "1000000000/minute"})
    if settings.database_url is None:
        raise SystemExit("payout_trips: CAURI_DATABASE_URL is required")
    runtime = Runtime.build(settings, url=as_asyncpg(settings.database_url))
    seen: list[Trip] = []

    def record(*params: Any) -> None:
        seen.append(Trip(time.perf_counter(), params[2], None))

    def traced(run: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Any]:
        async def timed(self: Prepared, *params: Any) -> Any:
            started = time.perf_counter()
            try:
                return await run(self, *params)
            finally:
                seen.append(Trip(started, self.sql, time.perf_counter()))

        return timed

    event.listen(runtime.engine.sync_engine, "before_cursor_execute", record)
    Prepared._run = traced(Prepared._run)  # type: ignore[method-assign]
    transport = httpx.ASGITransport(app=create_app(runtime))
    headers = {"Authorization": f"Bearer {args.key}"}
    held: list[float] = []
    try:
        async with httpx.AsyncClient(
            transport=transport, base_url="http://bench", headers=headers
        ) as client:
            if args.webhook_url:
                endpoint = await client.put(
                    "/api/v1/webhooks/endpoint", json={"url": args.webhook_url}
                )
                endpoint.raise_for_status()
            for number in range(args.warmup + args.requests):
                seen.clear()
                started = time.perf_counter()
                response = await client.post(
                    "/api/v1/payouts",
                    json={
                        "amount": args.amount,
                        "operator": "mtn",
                        "phone_number": "22997000000",
                        "external_id": f"trips-{uuid.uuid4().hex}",
                    },
                )
                answered = time.perf_counter()
                if response.status_code != 201 or response.json()["data"]["status"] != "succeeded":
                    raise SystemExit(f"payout not paid: {response.status_code} {response.text}")
                seen.sort(key=lambda trip: trip.started)
                lock = next(trip for trip in seen if LOCKS in trip.sql)
                in_transaction = any(trip.ended is None for trip in seen)
                released = answered if in_transaction or lock.ended is None else lock.ended
                if number >= args.warmup:
                    held.append((released - lock.started) * 1000)
    finally:
        await runtime.close()
    print("statements of one payout (ms from the request's start; * = balance row locked):")
    locked = False
    for trip in seen:
        locked = locked or LOCKS in trip.sql
        mark = "*" if locked else " "
        print(f"  {(trip.started - started) * 1000:7.2f} {mark} {first_words(trip.sql)}")
    ends = "COMMIT, then the answer" if in_transaction else "the answer (each statement committed)"
    print(f"  {(answered - started) * 1000:7.2f}   {ends}")
    statements = len(seen)
    in_lock = len(seen) - next(i for i, trip in enumerate(seen) if LOCKS in trip.sql)
    brackets = 2 if in_transaction else 0
    print(
        f"round trips per payout: {statements + brackets} ({statements} statements"
        f"{' + BEGIN + COMMIT' if in_transaction else ''})"
    )
    print(f"round trips while the balance row is locked: {in_lock + brackets // 2}")
    print(
        f"row lock held, one client, {args.requests} payouts: median "
        f"{statistics.median(held):.2f} ms, min {min(held):.2f} ms -> at most "
        f"{1000 / statistics.median(held):.0f} payouts/s from one balance at that hold time"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", required=True, help="a test key of a credited merchant")
    parser.add_argument("-n", "--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--amount", type=int, default=1000)
    parser.add_argument(
        "--webhook-url", default="", help="set as the merchant's endpoint first (never contacted)"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
