"""The SQL round trips of one `POST /api/v1/payouts`, and those made while the merchant's
balance row is locked (bench/payouts.sh trips; see bench/README.md).

Against the database of `CAURI_DATABASE_URL` (migrated, the merchant of `--key` credited),
sends `-n` test payouts to a number ending in 0000 (paid at once) one after another through
`httpx.ASGITransport` into the app, in-process, and records every statement SQLAlchemy
sends (`before_cursor_execute`) with its time. Prints the statements of the last payout,
the round trips per payout (BEGIN, which asyncpg sends before the first statement, and
COMMIT come on top), the round trips from the statement that locks the balance's row
(`... FOR UPDATE`) to the COMMIT that releases it, and how long the row stays locked with
a single client (from that statement to the answer: median and minimum). Concurrent payouts
of one merchant wait for that lock one after the other, so its hold time bounds their
throughput: at most 1 / hold time payouts per second, whatever the CPU.

    CAURI_DATABASE_URL=postgresql://... uv run python bench/payout_trips.py --key sk_test_...
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time
import uuid
from typing import Any

import httpx
import structlog
from sqlalchemy import event

from cauri.app import create_app
from cauri.config import get_settings
from cauri.kit.db import as_asyncpg
from cauri.runtime import Runtime

LOCKS = "FOR UPDATE"


def first_words(statement: str) -> str:
    return " ".join(statement.split()[:4])[:70]


async def run(args: argparse.Namespace) -> None:
    # The access line of each request would bury the figures.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    settings = get_settings().model_copy(update={"rate_limit": "1000000000/minute"})
    if settings.database_url is None:
        raise SystemExit("payout_trips: CAURI_DATABASE_URL is required")
    runtime = Runtime.build(settings, url=as_asyncpg(settings.database_url))
    seen: list[tuple[float, str]] = []

    def record(*params: Any) -> None:
        seen.append((time.perf_counter(), params[2]))

    event.listen(runtime.engine.sync_engine, "before_cursor_execute", record)
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
                locked_at = next(at for at, sql in seen if LOCKS in sql)
                if number >= args.warmup:
                    held.append((answered - locked_at) * 1000)
    finally:
        await runtime.close()
    print("statements of one payout (ms from the request's start; * = balance row locked):")
    locked = False
    for at, sql in seen:
        locked = locked or LOCKS in sql
        print(f"  {(at - started) * 1000:7.2f} {'*' if locked else ' '} {first_words(sql)}")
    print(f"  {(answered - started) * 1000:7.2f} * COMMIT, then the answer")
    statements = len(seen)
    in_lock = len(seen) - next(i for i, (_, sql) in enumerate(seen) if LOCKS in sql)
    print(f"round trips per payout: {statements + 2} ({statements} statements + BEGIN + COMMIT)")
    print(f"round trips while the balance row is locked: {in_lock + 1} (with COMMIT)")
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
