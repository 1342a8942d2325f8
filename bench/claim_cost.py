"""The capped claim of a grouped lane (webhook deliveries) on a backlog, before and after the
index-driven claim: PostgreSQL's execution time (EXPLAIN ANALYZE, best of 5, each rolled
back) of the `_CLAIM_CAPPED` statement of `src/cauri/worker/queue.py` as it is at git
revision BEFORE and as it is in the working tree, on a scratch database migrated to head,
for 500 / 5,000 / 20,000 queued deliveries spread over 50 / 50 / 200 endpoints.

    uv run python bench/claim_cost.py [BEFORE]      # default: d9391d8, before the index
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import subprocess
import sys
import uuid

import asyncpg

SERVER = "postgresql://postgres@127.0.0.1:5432"
BACKLOGS = ((500, 50), (5000, 50), (20000, 200))
VALUES = {
    "lane": "'webhooks-live'",
    "now": "now()",
    "limit": "16",
    "group_cap": "4",
    "lease_until": "now() + interval '60 s'",
}
FILL = (
    "INSERT INTO jobs (kind, lane, group_key, payload, run_at, max_attempts, created_at, status) "
    "SELECT 'webhooks.deliver', 'webhooks-live', 'g' || (i % $2), '{}'::jsonb, "
    "now() - (i || ' ms')::interval, 10, now(), 'queued' FROM generate_series(1, $1) i"
)


def _strings(source: str, start: str, end: str) -> str:
    """The string literals between two markers of queue.py, joined (its SQL is constant)."""
    part = source[source.index(start) : source.index(end)]
    return "".join(ast.literal_eval(m.group(0)) for m in re.finditer(r'"(?:[^"\\]|\\.)*"', part))


def claim_sql(source: str) -> str:
    claim = _strings(source, "_CLAIM_CAPPED = text(", "# Brings a queued job forward")
    take = _strings(source, "_TAKE_PICKED = (", "# One statement claims")
    sql = claim + take
    return re.sub(r"(?<!:):(\w+)", lambda m: VALUES[m.group(1)], sql)


async def best_of_five(connection: asyncpg.Connection, sql: str) -> tuple[float, int]:
    best, taken = float("inf"), 0
    for _ in range(5):
        transaction = connection.transaction()
        await transaction.start()
        plan = await connection.fetchval("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        taken = await connection.fetchval("SELECT count(*) FROM jobs WHERE status = 'running'")
        await transaction.rollback()
        best = min(best, json.loads(plan)[0]["Execution Time"])
    return best, taken


def statements(before: str) -> tuple[str, str]:
    shown = ["git", "show", f"{before}:src/cauri/worker/queue.py"]
    old = claim_sql(subprocess.run(shown, capture_output=True, text=True, check=True).stdout)
    with open("src/cauri/worker/queue.py", encoding="utf-8") as current:
        return old, claim_sql(current.read())


def migrate(name: str) -> None:
    env = dict(os.environ, CAURI_DATABASE_URL=f"{SERVER}/{name}")
    subprocess.run(["uv", "run", "cauri", "migrate"], env=env, check=True, capture_output=True)


async def main(before: str) -> None:
    old, new = statements(before)
    name = "cauri_claim_" + uuid.uuid4().hex[:8]
    admin = await asyncpg.connect(f"{SERVER}/postgres")
    await admin.execute(f"CREATE DATABASE {name}")
    try:
        migrate(name)
        connection = await asyncpg.connect(f"{SERVER}/{name}")
        try:
            for backlog, groups in BACKLOGS:
                await connection.execute("TRUNCATE jobs")
                await connection.execute(FILL, backlog, groups)
                await connection.execute("ANALYZE jobs")
                for label, sql in ((before, old), ("working tree", new)):
                    ms, taken = await best_of_five(connection, sql)
                    print(
                        f"backlog {backlog:6d} in {groups:3d} groups: {label:12s} "
                        f"{ms:7.2f} ms ({taken} jobs taken)"
                    )
        finally:
            await connection.close()
    finally:
        await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
        await admin.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "d9391d8"))
