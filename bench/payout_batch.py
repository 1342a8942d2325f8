"""Bulk payouts (issue 28): how long `POST /api/v1/payout-batches` takes to accept 1,000 test
payouts, and how fast the worker then pays them, against the payout path itself (see
bench/README.md, "Payout batches").

In one process, on a scratch database of its own on PG_SERVER (migrated, dropped at the
end): a merchant with a test balance that never runs out; then, ROUNDS times,
1. a batch of `--items` test payouts to a number ending in 0000 (paid at once by the
   simulator) sent through `httpx.ASGITransport` into the app: the time to its 201;
2. the worker (`cauri.worker.runner.Worker`, the jobs of `cauri.jobs`) drains it: the time
   until the batch is `completed`, and the items paid per second;
3. the same number of `POST /api/v1/payouts` one after another, then `--clients` at a time,
   through the same app: payouts per second (the payout path's throughput from one balance,
   in process: no HTTP server, no network).

    uv run python bench/payout_batch.py [--items 1000] [--rounds 3] [--clients 16]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import time
import uuid
from decimal import Decimal
from typing import Any

import httpx
import structlog
from scratch_db import scratch_database

from cauri.app import create_app
from cauri.audit.actor import Actor
from cauri.config import get_settings
from cauri.connectors.secrets import sealing_keyring
from cauri.jobs import handlers
from cauri.kit.db import as_asyncpg, unit_of_work
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from cauri.staff import actions
from cauri.worker.runner import Worker

BATCHES = "/api/v1/payout-batches"
PAYOUTS = "/api/v1/payouts"


def _payout(amount: int) -> dict[str, Any]:
    return {
        "amount": amount,
        "operator": "mtn",
        "phone_number": "22997000000",
        "external_id": f"bench-{uuid.uuid4().hex}",
    }


async def _merchant(runtime: Runtime) -> str:
    """A test key whose balance never runs out."""
    async with unit_of_work(runtime.sessionmaker) as session:
        new = await merchants.create(
            session,
            name="bench",
            status="active",
            now=runtime.clock.now(),
            box=sealing_keyring(runtime.settings),
        )
        await actions.credit_balance(
            session,
            runtime,
            Actor.cli(),
            new.merchant.id,
            livemode=False,
            amount=Decimal(10**12),
            currency="XOF",
            reason="bench",
        )
    return new.test_key


async def _batch_round(
    client: httpx.AsyncClient, worker: Worker, items: int, amount: int
) -> tuple[float, float]:
    """(seconds to the 201, seconds to `completed`)."""
    body = {
        "external_id": f"bench-{uuid.uuid4().hex}",
        "items": [_payout(amount) for _ in range(items)],
    }
    started = time.perf_counter()
    response = await client.post(BATCHES, json=body)
    accepted = time.perf_counter() - started
    if response.status_code != 201:
        raise SystemExit(f"batch refused: {response.status_code} {response.text[:300]}")
    reference = response.json()["data"]["reference"]
    started = time.perf_counter()
    await worker.drain()
    drained = time.perf_counter() - started
    batch = (await client.get(f"{BATCHES}/{reference}")).json()["data"]
    if batch["status"] != "completed" or batch["counts"]["succeeded"] != items:
        raise SystemExit(f"batch not paid: {batch['status']} {batch['counts']}")
    return accepted, drained


async def _payouts_round(client: httpx.AsyncClient, count: int, clients: int, amount: int) -> float:
    """Payouts per second through `POST /payouts`, `clients` at a time."""
    left = iter(range(count))

    async def one_client() -> None:
        for _ in left:
            response = await client.post(PAYOUTS, json=_payout(amount))
            if response.status_code != 201:
                raise SystemExit(f"payout refused: {response.status_code} {response.text}")

    started = time.perf_counter()
    await asyncio.gather(*(one_client() for _ in range(clients)))
    return count / (time.perf_counter() - started)


async def run(args: argparse.Namespace) -> None:
    # The access line of each request would bury the figures.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    async with scratch_database(args.pg_server, "cauri_batch_bench") as url:
        settings = get_settings().model_copy(
            update={
                "database_url": url,
                "rate_limit": "1000000000/minute",
                "secret_key": os.environ.get("CAURI_SECRET_KEY", "bench-secret-key-" + "x" * 32),
            }
        )
        runtime = Runtime.build(settings, url=as_asyncpg(url))
        try:
            key = await _merchant(runtime)
            worker = Worker(runtime, handlers())
            transport = httpx.ASGITransport(app=create_app(runtime))
            async with httpx.AsyncClient(
                transport=transport,
                base_url="http://bench",
                headers={"Authorization": f"Bearer {key}"},
                timeout=120,
            ) as client:
                await _batch_round(client, worker, 10, args.amount)  # warm-up
                await _payouts_round(client, 50, 1, args.amount)
                accepted, drained, one, many = [], [], [], []
                for round_ in range(1, args.rounds + 1):
                    took, paid = await _batch_round(client, worker, args.items, args.amount)
                    accepted.append(took)
                    drained.append(args.items / paid)
                    one.append(await _payouts_round(client, args.items, 1, args.amount))
                    many.append(await _payouts_round(client, args.items, args.clients, args.amount))
                    print(
                        f"round {round_}: batch of {args.items} accepted in {took * 1000:.0f} ms, "
                        f"paid in {paid:.2f} s ({drained[-1]:.0f} items/s); POST /payouts: "
                        f"{one[-1]:.0f}/s one client, {many[-1]:.0f}/s {args.clients} clients"
                    )
        finally:
            await runtime.close()
    print(
        f"median: accepted in {statistics.median(accepted) * 1000:.0f} ms, "
        f"drained at {statistics.median(drained):.0f} items/s; POST /payouts "
        f"{statistics.median(one):.0f}/s (one client), "
        f"{statistics.median(many):.0f}/s ({args.clients} clients)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--amount", type=int, default=1000)
    parser.add_argument(
        "--pg-server", default=os.environ.get("PG_SERVER", "postgresql://postgres@127.0.0.1:5432")
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
