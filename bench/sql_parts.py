"""CPU and round trips of the two one-statement writes, in-process (see bench/README.md,
String fragments to Core): a test payment its operator decides at once (`POST /payments`
to a number ending in 0000) and a third party's test payout paid at once (`POST /payouts`).

Creates a scratch database on a PostgreSQL server, migrates it, creates a merchant whose
test environment has a webhook endpoint (so that each write also records its event's
delivery and job and NOTIFYs) and credits its test balance, then sends `-n` payments and
`-n` payouts one after another through `httpx.ASGITransport` into the app, `--rounds` times.
Prints, per request, the process CPU time (`time.process_time`: the app, SQLAlchemy, asyncpg
and the in-process client, not PostgreSQL's work), median and minimum over the rounds, and
the round trips (what SQLAlchemy sends and what asyncpg sends itself: the statements of
`kit/prepared.py`, BEGIN, COMMIT). The database is dropped at the end. It uses only the HTTP
API, so that the same script measures a tree from before a change (`PYTHONPATH=.../src`).

    uv run python bench/sql_parts.py -n 300 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from collections import Counter
from decimal import Decimal
from typing import Any

import httpx
import structlog
from scratch_db import scratch_database
from sqlalchemy import event, text

from cauri.app import create_app
from cauri.audit.actor import Actor
from cauri.config import Settings
from cauri.connectors.secrets import sealing_keyring
from cauri.kit.db import as_asyncpg, unit_of_work
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from cauri.staff import actions

PAYMENT = ("/api/v1/payments", {"amount": 1000, "operator": "mtn", "phone_number": "22997000000"})
PAYOUT = ("/api/v1/payouts", {"amount": 1000, "operator": "mtn", "phone_number": "22997000000"})


async def send(client: httpx.AsyncClient, request: tuple[str, dict[str, Any]], count: int) -> None:
    path, body = request
    for _ in range(count):
        response = await client.post(path, json=body)
        if response.status_code != 201 or response.json()["data"]["status"] != "succeeded":
            raise SystemExit(f"{path} failed: {response.status_code} {response.text}")


async def measure(url: str, args: argparse.Namespace) -> dict[str, Any]:
    # The access line of each request would be most of what is measured.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    settings = Settings(database_url=url, rate_limit="100000000/minute")
    runtime = Runtime.build(settings, url=as_asyncpg(url))
    async with unit_of_work(runtime.sessionmaker) as session:
        new = await merchants.create(
            session,
            name="sql parts",
            status="active",
            now=runtime.clock.now(),
            box=sealing_keyring(settings),
        )
        await session.execute(
            text(
                "UPDATE webhook_endpoints SET url = 'https://receiver.invalid/cauri' "
                "WHERE merchant_id = :id AND NOT livemode"
            ),
            {"id": new.merchant.id},
        )
        await actions.credit_balance(
            session,
            runtime,
            Actor.cli(),
            new.merchant.id,
            livemode=False,
            amount=Decimal(10_000_000_000),
            currency="XOF",
            reason="bench",
        )
    trips: Counter[str] = Counter()

    @event.listens_for(runtime.engine.sync_engine, "before_cursor_execute")
    def count(*_: Any) -> None:
        trips["sqlalchemy"] += 1

    def logged(_: Any) -> None:
        trips["asyncpg"] += 1

    @event.listens_for(runtime.engine.sync_engine, "checkout")
    def watch(dbapi_connection: Any, *_: Any) -> None:
        driver = dbapi_connection.driver_connection
        driver.remove_query_logger(logged)
        driver.add_query_logger(logged)

    results: dict[str, Any] = {}
    transport = httpx.ASGITransport(app=create_app(runtime))
    headers = {"Authorization": f"Bearer {new.test_key}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://bench", headers=headers
    ) as client:
        for name, request in (("payment", PAYMENT), ("payout", PAYOUT)):
            await send(client, request, args.warmup)
            trips.clear()
            rounds = []
            for _ in range(args.rounds):
                started = time.process_time()
                await send(client, request, args.requests)
                rounds.append((time.process_time() - started) * 1000 / args.requests)
            total = args.requests * args.rounds
            results[name] = {
                "median": round(statistics.median(rounds), 3),
                "min": round(min(rounds), 3),
                "rounds": [round(r, 3) for r in rounds],
                # asyncpg logs what SQLAlchemy sends too: its count is every round trip.
                "trips": round(trips["asyncpg"] / total, 2),
                "through_sqlalchemy": round(trips["sqlalchemy"] / total, 2),
            }
    await runtime.close()
    return results


async def main(args: argparse.Namespace) -> None:
    async with scratch_database(args.server, "cauri_parts") as url:
        results = await measure(url, args)
    for kind, result in results.items():
        print(
            f"{kind:8} CPU median {result['median']} ms, min {result['min']} ms "
            f"(rounds {result['rounds']}); round trips {result['trips']} "
            f"(through SQLAlchemy {result['through_sqlalchemy']})"
        )


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--server",
        default="postgresql://postgres@127.0.0.1:5432",
        help="a PostgreSQL server URL without database (a scratch one is made)",
    )
    parser.add_argument("-n", "--requests", type=int, default=300, help="requests per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=100)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
