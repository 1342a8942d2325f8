"""A day's reconciliation of a busy connector account (issue 28: 100,000 statement lines
matched against the operations and the ledger in under 60 s, in bounded memory).

On a scratch database (migrated, dropped afterwards): `-n` live operations of a Wave
connector account spread over one day, each succeeded with its ledger transaction (the
clearing account and the merchant's balance, then the clearing account to the connector
account's wallet), then the wallet's transactions for that day as
Wave's API pages them (JSON Lines, written to a temporary file, streamed from the database):
one line per operation, except a few of each kind of discrepancy (listed twice, left out,
another amount, lines of the wallet's own). Measured, each in its own transaction, as
`cauri reconcile import` and `cauri reconcile run` do them: the import (read, COPY) and the
run (matching, recording). The process's peak resident memory is printed before and after.

    uv run python bench/reconcile.py -n 100000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path

import asyncpg
from scratch_db import scratch_database

from cauri.audit.actor import Actor
from cauri.kit.db import as_asyncpg, make_engine, make_sessionmaker, unit_of_work
from cauri.reconciliation import imports, matching
from cauri.reconciliation.days import UTC_DAYS

CONNECTOR = "bench-wave"
DAY = date(2026, 11, 27)
ODD = 10  # of each kind of discrepancy

_SEED = """
INSERT INTO connector_accounts
    (name, kind, environment, base_url, settings, secret_names, secrets, created_at, updated_at)
VALUES ($1, 'wave', 'production', 'https://api.wave.com', '{}', '{}', '', now(), now());

INSERT INTO operator_operations (id, livemode, connector, operator, action, subject,
    subject_ref, request, status, sent, created_at, updated_at, settled_at)
SELECT gen_random_uuid(), true, $1, 'wave_sn', 'collect', 'payment', 'pay_' || i,
       jsonb_build_object('amount', 1000 + i % 500, 'currency', 'XOF',
                          'phone_number', '2217' || lpad(i::text, 8, '0')),
       'succeeded', true, at, at, at
FROM generate_series(1, $2::int) i,
     LATERAL (SELECT $3::timestamptz + (i * interval '86399 seconds') / $2::int AS at) t;

WITH t AS (
    INSERT INTO ledger_transactions (kind, reference, livemode, created_at)
    SELECT 'payment', subject_ref, true, created_at FROM operator_operations
    RETURNING id, reference, created_at
)
INSERT INTO ledger_postings (transaction_id, created_at, account, currency, amount)
SELECT t.id, t.created_at, side.account, 'XOF', side.amount
FROM t JOIN operator_operations o ON o.subject_ref = t.reference
CROSS JOIN LATERAL (VALUES
    ('operator:wave_sn:clearing:live:XOF', -(o.request ->> 'amount')::bigint),
    ('merchant:m_bench:available:live:XOF', (o.request ->> 'amount')::bigint)
) side(account, amount);

WITH t AS (
    INSERT INTO ledger_transactions (kind, reference, livemode, created_at)
    SELECT 'carried', subject_ref, true, created_at FROM operator_operations
    RETURNING id, reference, created_at
)
INSERT INTO ledger_postings (transaction_id, created_at, account, currency, amount)
SELECT t.id, t.created_at, side.account, 'XOF', side.amount
FROM t JOIN operator_operations o ON o.subject_ref = t.reference
CROSS JOIN LATERAL (VALUES
    ('connector:' || o.connector || ':wallet:live:XOF', -(o.request ->> 'amount')::bigint),
    ('operator:wave_sn:clearing:live:XOF', (o.request ->> 'amount')::bigint)
) side(account, amount);
"""


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def seed(url: str, lines: int) -> None:
    connection = await asyncpg.connect(url)
    try:
        start = datetime.combine(DAY, datetime.min.time(), tzinfo=UTC)
        account, operations, collected, carried = _SEED.split(";\n\n")
        async with connection.transaction():
            await connection.execute(account, CONNECTOR)
            await connection.execute(operations, CONNECTOR, lines, start)
            await connection.execute(collected)
            await connection.execute(carried)
        # As autovacuum would have by then: the planner's statistics of the tables.
        await connection.execute("ANALYZE")
    finally:
        await connection.close()


async def write_statement(url: str, path: Path, page_size: int = 1000) -> int:
    """Wave's pages for the day, from the operations, streamed; returns the lines written."""
    connection = await asyncpg.connect(url)
    written, balance, page = 0, 0, []
    try:
        async with connection.transaction():
            rows = connection.cursor(
                "SELECT id, (request->>'amount')::bigint AS amount, request->>'phone_number' "
                "AS phone, created_at, row_number() OVER (ORDER BY created_at) AS n "
                "FROM operator_operations ORDER BY created_at"
            )
            with path.open("w") as out:
                async for row in rows:
                    n = row["n"]
                    if n <= ODD:  # left out
                        continue
                    amount = row["amount"] + (500 if n <= 2 * ODD else 0)  # another amount
                    copies = 2 if n <= 3 * ODD else 1  # listed twice
                    for _ in range(copies):
                        fee = amount // 100
                        balance += amount - fee
                        page.append(
                            {
                                "timestamp": row["created_at"].strftime("%Y-%m-%dT%H:%M:%SZ"),
                                "transaction_id": f"T_{n:012d}",
                                "transaction_type": "api_checkout",
                                "amount": str(amount - fee),
                                "fee": str(fee),
                                "balance": str(balance),
                                "currency": "XOF",
                                "is_reversal": False,
                                "counterparty_mobile": "+" + row["phone"],
                                "client_reference": str(row["id"]),
                            }
                        )
                    if n <= 4 * ODD:  # the wallet's own
                        balance += 700
                        page.append(
                            page[-1]
                            | {
                                "transaction_id": f"T_OWN{n:09d}",
                                "amount": "700",
                                "fee": "0",
                                "balance": str(balance),
                                "client_reference": None,
                                "counterparty_mobile": "+221700000000",
                            }
                        )
                    if len(page) >= page_size:
                        written += len(page)
                        out.write(json.dumps({"items": page}) + "\n")
                        page = []
                written += len(page)
                out.write(json.dumps({"items": page}) + "\n")
    finally:
        await connection.close()
    return written


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=100_000, help="operations (statement lines)")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    args = parser.parse_args()
    async with scratch_database(args.server, "cauri_bench_reconcile") as url:
        started = time.perf_counter()
        await seed(url, args.n)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "wave.jsonl"
            written = await write_statement(url, path)
            size = path.stat().st_size
            print(
                f"seeded {args.n} operations, statement of {written} lines ({size / 1e6:.1f} MB)"
                f" in {time.perf_counter() - started:.1f} s; peak RSS {peak_mib():.0f} MiB"
            )
            engine = make_engine(as_asyncpg(url))
            sessions = make_sessionmaker(engine)
            try:
                started = time.perf_counter()
                async with unit_of_work(sessions) as session:
                    imported = await imports.import_file(
                        session, CONNECTOR, path, Actor.cli(), datetime.now(UTC), UTC_DAYS
                    )
                took = time.perf_counter() - started
                print(
                    f"import: {imported.lines} lines in {took:.1f} s "
                    f"({imported.lines / took:,.0f} lines/s); peak RSS {peak_mib():.0f} MiB"
                )
                started = time.perf_counter()
                async with unit_of_work(sessions) as session:
                    run = await matching.run(session, CONNECTOR, DAY, datetime.now(UTC), UTC_DAYS)
                took = time.perf_counter() - started
                print(
                    f"run: {run.lines} lines, {run.matched} matched, found {run.found} "
                    f"in {took:.1f} s; peak RSS {peak_mib():.0f} MiB"
                )
            finally:
                await engine.dispose()


if __name__ == "__main__":
    asyncio.run(main())
