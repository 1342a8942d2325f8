"""A database of the bench's own on a PostgreSQL server, migrated, dropped afterwards: what
the in-process benches (`profile_payments.py`, `sql_parts.py`) measure on."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from cauri.kit import migrate
from cauri.kit.db import as_asyncpg


@asynccontextmanager
async def scratch_database(server: str, prefix: str) -> AsyncIterator[str]:
    """Its URL (`postgresql://…`) on `server` (`postgresql://user@host:port`)."""
    server = server.rstrip("/")
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(f"{server}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = f"{server}/{name}"
        await asyncio.to_thread(migrate.upgrade, as_asyncpg(url))
        yield url
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
