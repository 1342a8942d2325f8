"""A fresh, migrated database of one's own: on CAURI_TEST_DATABASE_URL's server (created, then
dropped at the end), else on an embedded PostgreSQL in a temporary directory. The test
session's database (conftest.py) and the chaos campaign's (tools/chaos)."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from cauri.history import partitions
from cauri.kit import embedded_pg, migrate
from cauri.kit.db import as_asyncpg


def _with_database(url: str, name: str) -> str:
    head, _, query = url.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")


async def _months_ahead(url: str) -> None:
    """What `cauri migrate` does after the migrations: this month's partitions and the next."""
    engine = create_async_engine(url)
    try:
        async with AsyncSession(engine) as session, session.begin():
            await partitions.ensure_ahead(session, datetime.now(UTC))
    finally:
        await engine.dispose()


@asynccontextmanager
async def fresh_database(prefix: str) -> AsyncIterator[str]:
    """Its URL (asyncpg form); its name starts with `prefix`."""
    configured = os.environ.get("CAURI_TEST_DATABASE_URL")
    embedded: Path | None = None
    if configured:
        server = as_asyncpg(configured)
    else:
        embedded = Path(tempfile.mkdtemp(prefix=f"{prefix}-pg-"))
        server = embedded_pg.start(embedded)
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(server.replace("postgresql+asyncpg://", "postgresql://", 1))
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = _with_database(server, name)
    try:
        await migrate.upgrade_async(url)
        await _months_ahead(url)
        yield url
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
        if embedded is not None:
            embedded_pg.stop(embedded)
            shutil.rmtree(embedded)
