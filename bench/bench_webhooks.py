"""Webhook deliveries: event → first attempt latency, and deliveries per second (see
bench/README.md).

Runs the real pipeline against a PostgreSQL database: events are emitted as the services
emit them (event, delivery and job in one transaction), an in-process worker (`cauri
worker`'s loop) signs and POSTs them to a receiver on loopback, in a process of its own,
that answers 200 at once and notes when each request arrived.

1. Latency: events emitted one by one at a steady pace while the worker runs; latency is
   the receiver's arrival time minus the emitting transaction's commit time.
2. Throughput: a backlog of N events is emitted with the worker stopped, then the worker
   is started; deliveries per second = N / (last arrival - worker start).

    uv run python bench/bench_webhooks.py --database-url postgresql://...  [-n 2000] [-c 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import socket
import sys
import time
import uuid
from typing import Any

import httpx
from cauri.worker.handlers import all_handlers

from cauri.config import Settings
from cauri.events import service as events
from cauri.kit import migrate
from cauri.kit.db import as_asyncpg, unit_of_work
from cauri.merchants.auth import Caller
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from cauri.webhooks import service as webhooks
from cauri.webhooks.schemas import EndpointUpdate
from cauri.worker.runner import Worker

# A payment.succeeded-sized `data` (about 700 bytes of JSON, as a payment object).
SAMPLE_DATA: dict[str, Any] = {
    "reference": "00000000-0000-0000-0000-000000000000",
    "identifier": "CAUBENCHMARK0",
    "external_id": None,
    "status": "succeeded",
    "amount": 1000,
    "fee_amount": 0,
    "total_amount": 1000,
    "currency": "XOF",
    "description": "Benchmark",
    "payment_mode": {
        "id": 1,
        "name": "MTN Mobile Money",
        "type": "mobile_money",
        "operator": "mtn",
        "country": "Bénin",
        "country_code": "BJ",
    },
    "customer": {"firstname": None, "lastname": None, "email": None, "phone_number": None},
    "payment_url": None,
    "metadata": {"order": "bench"},
    "livemode": False,
    "created_at": "2026-01-01T00:00:00+00:00",
    "updated_at": "2026-01-01T00:00:00+00:00",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_listening(port: int) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def receiver_main(port: int) -> None:
    """A minimal ASGI receiver (child process): 200 to every POST; GET returns arrivals."""
    import uvicorn

    arrivals: list[tuple[float, str]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        more = True
        while more:
            message = await receive()
            more = message.get("more_body", False)
        if scope["method"] == "POST":
            headers = dict(scope["headers"])
            arrivals.append((time.time(), headers[b"x-service-delivery"].decode()))
            body = b""
        else:
            body = json.dumps(arrivals).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")


async def arrivals(poller: httpx.AsyncClient, receiver_url: str) -> dict[str, float]:
    response = await poller.get(receiver_url)
    return {delivery_id: at for at, delivery_id in response.json()}


async def wait_for(receiver_url: str, ids: set[str], within: float) -> dict[str, float]:
    deadline = time.monotonic() + within
    # One client for all polls: each new client loads the CA bundle, stealing CPU
    # from the worker being measured.
    async with httpx.AsyncClient() as poller:
        while True:
            seen = await arrivals(poller, receiver_url)
            if ids <= seen.keys():
                return seen
            if time.monotonic() > deadline:
                raise SystemExit(f"only {len(ids & seen.keys())} of {len(ids)} deliveries arrived")
            await asyncio.sleep(0.25)


async def emit(runtime: Runtime, merchant_id: str, count: int) -> dict[str, float]:
    """`count` events in one transaction; returns each event id with its commit time."""
    async with unit_of_work(runtime.sessionmaker) as session:
        ids = [
            await events.emit(
                session,
                merchant_id=merchant_id,
                livemode=False,
                type="payment.succeeded",
                data=SAMPLE_DATA,
                at=runtime.clock.now(),
            )
            for _ in range(count)
        ]
    committed = time.time()
    return {str(event_id): committed for event_id in ids}


def percentile(ordered: list[float], share: float) -> float:
    return ordered[max(1, math.ceil(share * len(ordered))) - 1] if ordered else math.nan


async def run(args: argparse.Namespace, receiver_url: str) -> dict[str, Any]:
    settings = Settings(
        database_url=args.database_url,
        webhook_allow_private=True,
        worker_concurrency=args.concurrency,
    )
    runtime = Runtime.build(settings, url=as_asyncpg(args.database_url))
    try:
        async with unit_of_work(runtime.sessionmaker) as session:
            new = await merchants.create(
                session,
                name=f"bench-{uuid.uuid4().hex[:6]}",
                status="active",
                now=runtime.clock.now(),
            )
            await webhooks.configure(
                session, runtime, Caller(new.merchant.id, False), EndpointUpdate(url=receiver_url)
            )
        merchant_id = new.merchant.id

        # 1. Latency, worker running.
        stop = asyncio.Event()
        worker = asyncio.create_task(Worker(runtime, all_handlers()).run_forever(stop))
        await asyncio.sleep(0.5)  # the worker is listening
        committed: dict[str, float] = {}
        for _ in range(args.latency_events):
            committed |= await emit(runtime, merchant_id, 1)
            await asyncio.sleep(args.pace)
        seen = await wait_for(receiver_url, set(committed), within=60)
        latencies = sorted((seen[i] - committed[i]) * 1000 for i in committed)
        stop.set()
        await worker

        # 2. Throughput from a backlog.
        backlog: dict[str, float] = {}
        for start in range(0, args.requests, 100):
            backlog |= await emit(runtime, merchant_id, min(100, args.requests - start))
        stop = asyncio.Event()
        started, cpu_started = time.time(), time.process_time()
        worker = asyncio.create_task(Worker(runtime, all_handlers()).run_forever(stop))
        seen = await wait_for(receiver_url, set(backlog), within=600)
        finished = max(seen[i] for i in backlog)
        stop.set()
        await worker
        cpu = time.process_time() - cpu_started
        return {
            "latency_events": len(latencies),
            "latency_ms": {
                "p50": round(percentile(latencies, 0.5), 1),
                "p95": round(percentile(latencies, 0.95), 1),
                "p99": round(percentile(latencies, 0.99), 1),
                "max": round(latencies[-1], 1),
            },
            "backlog": len(backlog),
            "concurrency": args.concurrency,
            "deliveries_per_second": round(len(backlog) / (finished - started), 1),
            # The worker's own CPU per delivery (this process: signing, HTTP client, SQL):
            # what bounds one worker process, whatever else loads the machine.
            "worker_cpu_ms_per_delivery": round(cpu * 1000 / len(backlog), 2),
        }
    finally:
        await runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("CAURI_DATABASE_URL"))
    parser.add_argument("-n", "--requests", type=int, default=2000, help="backlog size")
    parser.add_argument("-c", "--concurrency", type=int, default=32, help="worker slots")
    parser.add_argument("--latency-events", type=int, default=200)
    parser.add_argument("--pace", type=float, default=0.02, help="seconds between events")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.database_url:
        parser.error("--database-url or CAURI_DATABASE_URL is required")
    migrate.upgrade(as_asyncpg(args.database_url))

    port = free_port()
    receiver = multiprocessing.get_context("spawn").Process(target=receiver_main, args=(port,))
    receiver.start()
    receiver_url = f"http://127.0.0.1:{port}/hooks"
    try:
        wait_until_listening(port)
        result = asyncio.run(run(args, receiver_url))
    finally:
        receiver.terminate()
        receiver.join()
    if args.json:
        print(json.dumps(result))
        return
    latency = result["latency_ms"]
    print(
        f"event → first attempt ({result['latency_events']} events, one every "
        f"{args.pace * 1000:g} ms): p50 {latency['p50']} ms  p95 {latency['p95']} ms  "
        f"p99 {latency['p99']} ms  max {latency['max']} ms"
    )
    print(
        f"throughput: {result['backlog']} deliveries, {result['concurrency']} in flight: "
        f"{result['deliveries_per_second']} deliveries/s, "
        f"worker CPU {result['worker_cpu_ms_per_delivery']} ms per delivery"
    )


if __name__ == "__main__":
    sys.exit(main())
