"""CPU and SQL statements per `POST /payments`, in-process (see bench/README.md, Hot path).

Creates a scratch database on a PostgreSQL server, migrates it, creates a merchant, then
sends test-mode payments that settle at once (number ending in 0000) one after another
through `httpx.ASGITransport` into the app. Reports, per payment, the process CPU time
(`time.process_time`: the app, SQLAlchemy, asyncpg and the in-process HTTP client, but not
PostgreSQL's own work) and the queries sent (its round trips: through the session, and
what asyncpg sends itself, BEGIN and COMMIT included). CPU time moves much less with the
machine's load than wall-clock latency does; the median and the minimum of several rounds
are reported (the minimum is the least disturbed by other processes).

    uv run python bench/profile_payments.py --server postgresql://postgres@127.0.0.1:5432 \
        -n 500 --rounds 5 [--profile 30]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import sys
import time
from collections import Counter
from typing import Any

import httpx
from scratch_db import scratch_database
from sqlalchemy import event

from cauri.app import create_app
from cauri.config import Settings
from cauri.connectors.secrets import sealing_keyring
from cauri.kit.db import as_asyncpg, unit_of_work
from cauri.merchants.service import merchants
from cauri.runtime import Runtime

BODY = {"amount": 1000, "operator": "mtn", "phone_number": "22997000000"}


def first_words(statement: str) -> str:
    """A statement's kind for the tally: its first keywords and table."""
    return " ".join(statement.split()[:3])[:60]


async def pay(client: httpx.AsyncClient, count: int) -> None:
    for _ in range(count):
        response = await client.post("/api/v1/payments", json=BODY)
        if response.status_code != 201 or response.json()["data"]["status"] != "succeeded":
            raise SystemExit(f"payment failed: {response.status_code} {response.text}")


async def measure(url: str, args: argparse.Namespace) -> dict[str, Any]:
    settings = Settings(database_url=url, rate_limit="100000000/minute")
    runtime = Runtime.build(settings, url=as_asyncpg(url))
    async with unit_of_work(runtime.sessionmaker) as session:
        new = await merchants.create(
            session,
            name="profile",
            status="active",
            now=runtime.clock.now(),
            box=sealing_keyring(settings),
        )
    statements: Counter[str] = Counter()

    @event.listens_for(runtime.engine.sync_engine, "before_cursor_execute")
    def count(*params: Any) -> None:
        statements[first_words(params[2])] += 1

    def logged(query: Any) -> None:
        statements[first_words(query.query)] += 1

    # What asyncpg sends itself: the reads run past the session (kit.prepared), BEGIN, COMMIT.
    @event.listens_for(runtime.engine.sync_engine, "checkout")
    def watch(dbapi_connection: Any, *_: Any) -> None:
        driver = dbapi_connection.driver_connection
        driver.remove_query_logger(logged)
        driver.add_query_logger(logged)

    app = create_app(runtime)
    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {new.test_key}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://bench", headers=headers
    ) as client:
        await pay(client, args.warmup)
        per_round = []
        statements.clear()
        for _ in range(args.rounds):
            started = time.process_time()
            await pay(client, args.requests)
            per_round.append((time.process_time() - started) * 1000 / args.requests)
        counted = dict(statements)
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            await pay(client, args.requests)
            profiler.disable()
            pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.profile)
    await runtime.close()
    total = args.requests * args.rounds
    return {
        "cpu_ms_per_payment_median": round(statistics.median(per_round), 2),
        "cpu_ms_per_payment_min": round(min(per_round), 2),
        "cpu_ms_per_payment_rounds": [round(r, 2) for r in per_round],
        "statements_per_payment": round(sum(counted.values()) / total, 2),
        "statements": {kind: round(n / total, 2) for kind, n in Counter(counted).most_common()},
    }


async def main(args: argparse.Namespace) -> None:
    async with scratch_database(args.server, "cauri_profile") as url:
        result = await measure(url, args)
    print(
        f"CPU per payment   median {result['cpu_ms_per_payment_median']} ms, "
        f"min {result['cpu_ms_per_payment_min']} ms (rounds {result['cpu_ms_per_payment_rounds']})"
    )
    print(f"round trips per payment   {result['statements_per_payment']}")
    for kind, n in result["statements"].items():
        print(f"  {n:5}  {kind}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--server",
        default="postgresql://postgres@127.0.0.1:5432",
        help="a PostgreSQL server URL without database (a scratch one is made)",
    )
    parser.add_argument("-n", "--requests", type=int, default=500, help="payments per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="LINES",
        help="after the rounds, one more round under cProfile; print LINES",
    )
    parser.add_argument("--sort", default="cumulative", help="cProfile sort key (tottime...)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
