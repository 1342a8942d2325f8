"""Webhook deliveries with real `cauri worker` processes: event commit → first attempt
latency, deliveries per second, and the CPU each delivery costs (see bench/README.md).

Creates a scratch database on `--server`, migrates it, and creates `--merchants` merchants
whose live endpoints all point at one receiver on loopback. The receiver runs in a process
of its own: an asyncio protocol on httptools (keep-alive HTTP/1.1, no framework) that answers
`200` with an empty body to every POST at once and notes when each arrived and its
`X-Service-Delivery`; it costs a few tens of µs per request, so it is not what is measured.
`-w` worker processes run the venv's `cauri worker` (what `uv run cauri worker` runs), with
`CAURI_WEBHOOK_ALLOW_PRIVATE=1`: without it the SSRF guard refuses loopback, as it must in
production (the tests and the previous bench use the same setting).

1. Latency (`--latency-events`, one every `--pace` s, each in its own transaction, the
   workers idle between): the receiver's arrival time minus the emitting transaction's
   commit time (NOTIFY wake-up, claim, read, sign, connect or reuse, POST).
2. Throughput: with the workers running and idle, `-n` events in one transaction; from its
   commit to the last arrival: deliveries/s; until every job is done (outcomes recorded):
   completed/s. CPU from /proc over that window: the worker processes, the receiver, and
   PostgreSQL's backends of the scratch database (0 if the server is not on this machine),
   each per delivery.

    uv run python bench/bench_webhooks.py [-w 2] [-n 5000] [--merchants 50] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from cauri.config import Settings
from cauri.events import service as events
from cauri.kit import migrate
from cauri.kit.db import as_asyncpg, unit_of_work
from cauri.merchants.caller import Caller
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from cauri.webhooks import service as webhooks
from cauri.webhooks.schemas import EndpointUpdate
from cauri.worker.runner import LISTENER_NAME

HZ = os.sysconf("SC_CLK_TCK")

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
    "livemode": True,
    "created_at": "2026-01-01T00:00:00+00:00",
    "updated_at": "2026-01-01T00:00:00+00:00",
}


# --- the receiver (its own process) ---------------------------------------------------


def receiver_main(port: int) -> None:
    """200 to every POST, keep-alive; `GET /count` and `GET /arrivals` (JSON) for the bench."""
    import httptools

    arrivals: list[tuple[float, str]] = []

    class Connection(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport: Any = transport
            self.parser = httptools.HttpRequestParser(self)
            self.url = b""
            self.delivery = ""

        def data_received(self, data: bytes) -> None:
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserError:
                self.transport.close()

        def on_message_begin(self) -> None:
            self.url, self.delivery = b"", ""

        def on_url(self, url: bytes) -> None:
            self.url += url

        def on_header(self, name: bytes, value: bytes) -> None:
            if name.lower() == b"x-service-delivery":
                self.delivery = value.decode()

        def on_message_complete(self) -> None:
            body = b""
            if self.parser.get_method() == b"POST":
                arrivals.append((time.time(), self.delivery))
            elif self.url == b"/count":
                body = str(len(arrivals)).encode()
            else:
                body = json.dumps(arrivals).encode()
            self.transport.write(
                b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            if not self.parser.should_keep_alive():
                self.transport.close()

    async def serve() -> None:
        server = await asyncio.get_running_loop().create_server(
            Connection, "127.0.0.1", port, backlog=1024
        )
        async with server:
            await server.serve_forever()

    asyncio.run(serve())


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


# --- CPU from /proc ------------------------------------------------------------------


def ticks(pids: list[int]) -> dict[int, int]:
    """User + system clock ticks of each process still alive."""
    found = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[pid] = int(fields[11]) + int(fields[12])
    return found


def spent_ms(before: dict[int, int], after: dict[int, int]) -> float:
    """CPU ms between two snapshots; a process born in between counts from 0."""
    return sum(t - before.get(pid, 0) for pid, t in after.items()) * 1000 / HZ


async def backends(admin: asyncpg.Connection, database: str) -> list[int]:
    rows = await admin.fetch(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        database,
    )
    return [row["pid"] for row in rows]


# --- the run -------------------------------------------------------------------------


def start_workers(count: int, env: dict[str, str], log: str) -> list[subprocess.Popen[bytes]]:
    """`count` processes of the venv's `cauri worker`, their output appended to `log`."""
    cauri = str(Path(sys.executable).with_name("cauri"))
    with Path(log).open("ab") as output:
        return [
            subprocess.Popen([cauri, "worker"], env=env, stdout=output, stderr=subprocess.STDOUT)
            for _ in range(count)
        ]


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def percentile(ordered: list[float], share: float) -> float:
    return ordered[max(1, math.ceil(share * len(ordered))) - 1] if ordered else math.nan


async def emit(session: Any, merchant_ids: list[str], count: int, first: int = 0) -> list[str]:
    """`count` events in the session's transaction, round-robin over the merchants."""
    return [
        str(
            await events.emit(
                session,
                merchant_id=merchant_ids[(first + n) % len(merchant_ids)],
                livemode=True,
                type="payment.succeeded",
                data=SAMPLE_DATA,
                at=datetime.now(UTC),
            )
        )
        for n in range(count)
    ]


async def count(poller: httpx.AsyncClient, receiver: str) -> int:
    return int((await poller.get(f"{receiver}/count")).text)


async def arrivals(poller: httpx.AsyncClient, receiver: str) -> list[tuple[float, str]]:
    return [(at, delivery) for at, delivery in (await poller.get(f"{receiver}/arrivals")).json()]


async def run(args: argparse.Namespace, database_url: str, database: str, port: int) -> None:
    receiver = f"http://127.0.0.1:{port}"
    runtime = Runtime.build(
        Settings(database_url=database_url, webhook_allow_private=True),
        url=as_asyncpg(database_url),
    )
    admin = await asyncpg.connect(database_url)
    poller = httpx.AsyncClient(timeout=30)
    workers: list[subprocess.Popen[bytes]] = []
    try:
        merchant_ids = []
        async with unit_of_work(runtime.sessionmaker) as session:
            for n in range(args.merchants):
                new = await merchants.create(
                    session, name=f"bench-{n}", status="active", now=runtime.clock.now()
                )
                await webhooks.configure(
                    session,
                    runtime,
                    Caller(new.merchant.id, True),
                    EndpointUpdate(url=f"{receiver}/hooks/{n}"),
                )
                merchant_ids.append(new.merchant.id)

        env = os.environ | {
            "CAURI_DATABASE_URL": database_url,
            "CAURI_WEBHOOK_ALLOW_PRIVATE": "1",
            "CAURI_WORKER_CONCURRENCY": str(args.concurrency),
            "CAURI_LOG_JSON": "1",
        }
        workers = start_workers(args.workers, env, args.log)
        deadline = time.monotonic() + 120
        while (
            len(
                await admin.fetch(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = $2",
                    database,
                    LISTENER_NAME,
                )
            )
            < args.workers
        ):
            if time.monotonic() > deadline or any(w.poll() is not None for w in workers):
                raise SystemExit(f"workers did not start listening (log: {args.log})")
            await asyncio.sleep(0.2)
        await asyncio.sleep(1)  # past their first claim
        print(
            f"{args.workers} workers (pids {[w.pid for w in workers]}), load {load()}", flush=True
        )

        # 1. Latency: one event at a time.
        committed: dict[str, float] = {}
        for n in range(args.latency_events):
            async with unit_of_work(runtime.sessionmaker) as session:
                [event_id] = await emit(session, merchant_ids, 1, n)
            committed[event_id] = time.time()
            await asyncio.sleep(args.pace)
        # The receiver is another process: polled (ASYNC110), as below.
        while await count(poller, receiver) < len(committed):  # noqa: ASYNC110
            await asyncio.sleep(0.1)
        seen = {delivery: at for at, delivery in await arrivals(poller, receiver)}
        latencies = sorted((seen[i] - committed[i]) * 1000 for i in committed)
        print(
            f"commit → first attempt ({len(latencies)} events, one every {args.pace * 1000:g} "
            f"ms): p50 {percentile(latencies, 0.5):.1f}  p95 {percentile(latencies, 0.95):.1f}  "
            f"p99 {percentile(latencies, 0.99):.1f}  max {latencies[-1]:.1f} ms",
            flush=True,
        )
        await asyncio.sleep(1)

        # 2. Throughput: a backlog committed at once.
        already = await count(poller, receiver)
        worker_pids = [w.pid for w in workers]
        async with unit_of_work(runtime.sessionmaker) as session:
            backlog = await emit(session, merchant_ids, args.requests)
            pg_pids = await backends(admin, database)
            before = {
                "workers": ticks(worker_pids),
                "receiver": ticks([args.receiver_pid]),
                "postgres": ticks(pg_pids),
            }
            load_before = load()
        started = time.time()
        while await count(poller, receiver) < already + len(backlog):
            if any(w.poll() is not None for w in workers):
                raise SystemExit(f"a worker died (log: {args.log})")
            await asyncio.sleep(0.05)
        while await admin.fetchval("SELECT count(*) FROM jobs"):  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        completed = time.time()
        after = {
            "workers": ticks(worker_pids),
            "receiver": ticks([args.receiver_pid]),
            "postgres": ticks(await backends(admin, database)),
        }
        load_after = load()
        received = [(at, d) for at, d in await arrivals(poller, receiver) if d in set(backlog)]
        last = max(at for at, _ in received)
        twice = sum(n - 1 for n in Counter(d for _, d in received).values())
        statuses = dict(
            await admin.fetch("SELECT status, count(*) FROM webhook_deliveries GROUP BY status")
        )
        cpu = {name: spent_ms(before[name], after[name]) / len(backlog) for name in before}
        print(
            f"throughput: {len(backlog)} deliveries, {args.merchants} endpoints, "
            f"{args.workers} workers × concurrency {args.concurrency}: "
            f"{len(backlog) / (last - started):.0f} deliveries/s (last arrival), "
            f"{len(backlog) / (completed - started):.0f}/s completed (outcomes recorded); "
            f"{twice} delivered twice; deliveries {statuses}",
            flush=True,
        )
        print(
            "CPU ms per delivery: workers {workers:.2f}  receiver {receiver:.2f}  "
            "PostgreSQL backends {postgres:.2f}".format(**cpu)
            + f"   (load {load_before} → {load_after})",
            flush=True,
        )
        if args.json:
            print(
                json.dumps(
                    {
                        "latency_ms": [percentile(latencies, p) for p in (0.5, 0.95, 0.99)],
                        "deliveries_per_second": len(backlog) / (last - started),
                        "completed_per_second": len(backlog) / (completed - started),
                        "cpu_ms_per_delivery": cpu,
                    }
                )
            )
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
        await poller.aclose()
        await admin.close()
        await runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("-w", "--workers", type=int, default=2, help="cauri worker processes")
    parser.add_argument("-n", "--requests", type=int, default=5000, help="backlog size")
    parser.add_argument(
        "-c", "--concurrency", type=int, default=32, help="CAURI_WORKER_CONCURRENCY"
    )
    parser.add_argument("--merchants", type=int, default=50, help="endpoints (one per merchant)")
    parser.add_argument("--latency-events", type=int, default=200)
    parser.add_argument("--pace", type=float, default=0.02, help="seconds between events")
    parser.add_argument(
        "--log", default=str(Path(tempfile.gettempdir()) / "bench_webhooks_workers.log")
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    database = f"cauri_bench_webhooks_{uuid.uuid4().hex[:8]}"
    database_url = f"{args.server}/{database}"
    subprocess.run(["psql", f"{args.server}/postgres", "-qc", f'CREATE DATABASE "{database}"'],
                   check=True)  # fmt: skip
    port = free_port()
    receiver = multiprocessing.get_context("spawn").Process(target=receiver_main, args=(port,))
    receiver.start()
    args.receiver_pid = receiver.pid
    try:
        migrate.upgrade(as_asyncpg(database_url))
        wait_until_listening(port)
        asyncio.run(run(args, database_url, database, port))
    finally:
        receiver.terminate()
        receiver.join()
        if args.keep:
            print(f"kept database {database}")
        else:
            subprocess.run(
                ["psql", f"{args.server}/postgres", "-qc",
                 f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'],
                check=False,
            )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
