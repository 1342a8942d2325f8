"""Creates N active merchants through Cauri's own service (what `cauri merchants create`
calls) and prints their test keys, one a line: the key file of bench/payments.lua and
bench/payouts.lua. With a credit (XOF), each test balance is credited as `cauri merchants
credit --mode test` does, for payouts.

The CLI starts a process per merchant (about a second each); this makes 200 in one.

    CAURI_DATABASE_URL=postgresql://... uv run python bench/seed_merchants.py 200 [XOF] > keys
"""

from __future__ import annotations

import asyncio
import sys
from decimal import Decimal

from cauri.audit.actor import Actor
from cauri.config import get_settings
from cauri.connectors.secrets import sealing_keyring
from cauri.kit.db import as_asyncpg, unit_of_work
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from cauri.staff import actions


async def seed(count: int, credit: Decimal | None) -> list[str]:
    settings = get_settings()
    if settings.database_url is None:
        raise SystemExit("seed_merchants: CAURI_DATABASE_URL is required")
    runtime = Runtime.build(settings, url=as_asyncpg(settings.database_url))
    keys = []
    try:
        async with unit_of_work(runtime.sessionmaker) as session:
            for number in range(count):
                new = await merchants.create(
                    session,
                    name=f"bench {number}",
                    status="active",
                    now=runtime.clock.now(),
                    box=sealing_keyring(settings),
                )
                keys.append(new.test_key)
                if credit is not None:
                    await actions.credit_balance(
                        session,
                        runtime,
                        Actor.cli(),
                        new.merchant.id,
                        livemode=False,
                        amount=credit,
                        currency="XOF",
                        reason="bench",
                    )
    finally:
        await runtime.close()
    return keys


if __name__ == "__main__":
    credit = Decimal(sys.argv[2]) if len(sys.argv) > 2 else None
    print("\n".join(asyncio.run(seed(int(sys.argv[1]), credit))))
