"""Throughput and latency of `POST /payments` against a running Cauri (see bench/README.md).

Fires a fixed number of test-mode Mobile Money payments whose number ends in 0000 (the
simulator settles them at once: each request is a whole durable payment, ledger and event
included), with a fixed number in flight, and prints req/s, latency percentiles and errors.
Exits 1 when any request failed, so it can gate a script.

    uv run python bench/bench_payments.py --key sk_test_... -n 2000 -c 32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)  # seconds, successful requests only
    statuses: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)


def percentile(ordered: list[float], share: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def payment_body(args: argparse.Namespace) -> dict[str, Any]:
    return {"amount": args.amount, "operator": args.operator, "phone_number": args.phone}


async def fire(client: httpx.AsyncClient, body: dict[str, Any], tally: Tally | None) -> None:
    """One payment; `tally` None is a warm-up request, not counted."""
    started = time.perf_counter()
    try:
        response = await client.post("/api/v1/payments", json=body)
    except httpx.HTTPError as exc:
        if tally is not None:
            tally.errors[type(exc).__name__] += 1
        return
    elapsed = time.perf_counter() - started
    if tally is None:
        return
    tally.statuses[str(response.status_code)] += 1
    if response.status_code != 201:
        tally.errors[f"HTTP {response.status_code}"] += 1
    elif response.json()["data"]["status"] != "succeeded":
        tally.errors["payment not succeeded"] += 1
    else:
        tally.latencies.append(elapsed)


async def run_requests(
    client: httpx.AsyncClient,
    body: dict[str, Any],
    count: int,
    concurrency: int,
    tally: Tally | None,
) -> None:
    """`count` requests, at most `concurrency` in flight: each lane takes the next one."""
    remaining = iter(range(count))

    async def lane() -> None:
        for _ in remaining:
            await fire(client, body, tally)

    await asyncio.gather(*(lane() for _ in range(min(concurrency, count))))


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    limits = httpx.Limits(
        max_connections=args.concurrency, max_keepalive_connections=args.concurrency
    )
    headers = {"Authorization": f"Bearer {args.key}"}
    body = payment_body(args)
    async with httpx.AsyncClient(
        base_url=args.url, headers=headers, limits=limits, timeout=args.timeout
    ) as client:
        # Opens the connections and warms the server's pools before the clock starts.
        await run_requests(client, body, args.warmup, args.concurrency, None)
        tally = Tally()
        started = time.perf_counter()
        await run_requests(client, body, args.requests, args.concurrency, tally)
        wall = time.perf_counter() - started
    ordered = sorted(tally.latencies)
    return {
        "url": args.url,
        "requests": args.requests,
        "concurrency": args.concurrency,
        "seconds": round(wall, 3),
        "throughput_rps": round(len(ordered) / wall, 1) if wall else 0.0,
        "latency_ms": {
            name: round(percentile(ordered, share) * 1000, 1)
            for name, share in (("p50", 0.50), ("p95", 0.95), ("p99", 0.99), ("max", 1.0))
        },
        "succeeded": len(ordered),
        "statuses": dict(tally.statuses),
        "errors": dict(tally.errors),
    }


def report(result: dict[str, Any]) -> str:
    latency = result["latency_ms"]
    errors = ", ".join(f"{k}: {v}" for k, v in result["errors"].items()) or "none"
    return "\n".join(
        [
            f"POST /payments   {result['url']}",
            f"requests         {result['requests']} at concurrency {result['concurrency']}"
            f" in {result['seconds']} s",
            f"throughput       {result['throughput_rps']} req/s (succeeded payments only)",
            f"latency (ms)     p50 {latency['p50']}   p95 {latency['p95']}"
            f"   p99 {latency['p99']}   max {latency['max']}",
            f"statuses         {result['statuses']}",
            f"errors           {sum(result['errors'].values())} ({errors})",
        ]
    )


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("CAURI_BENCH_URL", "http://127.0.0.1:8000"))
    parser.add_argument(
        "--key",
        default=os.environ.get("CAURI_BENCH_KEY"),
        help="a test secret key (sk_test_...); default $CAURI_BENCH_KEY",
    )
    parser.add_argument("-n", "--requests", type=int, default=2000)
    parser.add_argument("-c", "--concurrency", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=100, help="uncounted requests first")
    parser.add_argument("--operator", default="mtn")
    parser.add_argument("--phone", default="22997000000", help="must end in 0000")
    parser.add_argument("--amount", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if not args.key or not args.key.startswith("sk_test_"):
        parser.error("a test key is required: --key sk_test_... or CAURI_BENCH_KEY")
    if args.requests < 1 or args.concurrency < 1 or args.warmup < 0:
        parser.error("--requests and --concurrency must be at least 1, --warmup at least 0")
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    result = asyncio.run(bench(args))
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
