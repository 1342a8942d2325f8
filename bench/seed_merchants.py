"""Creates N active merchants through Cauri's own service (what `cauri merchants create`
calls) and prints their test keys, one a line: the key file of bench/payments.lua.

The CLI starts a process per merchant (about a second each); this makes 200 in one.

    CAURI_DATABASE_URL=postgresql://... uv run python bench/seed_merchants.py 200 > keys.txt
"""

from __future__ import annotations

import asyncio
import sys

from cauri.config import get_settings
from cauri.kit.db import as_asyncpg, unit_of_work
from cauri.merchants.service import merchants
from cauri.runtime import Runtime


async def seed(count: int) -> list[str]:
    settings = get_settings()
    if settings.database_url is None:
        raise SystemExit("seed_merchants: CAURI_DATABASE_URL is required")
    runtime = Runtime.build(settings, url=as_asyncpg(settings.database_url))
    keys = []
    try:
        async with unit_of_work(runtime.sessionmaker) as session:
            for number in range(count):
                new = await merchants.create(
                    session, name=f"bench {number}", status="active", now=runtime.clock.now()
                )
                keys.append(new.test_key)
    finally:
        await runtime.close()
    return keys


if __name__ == "__main__":
    print("\n".join(asyncio.run(seed(int(sys.argv[1])))))
