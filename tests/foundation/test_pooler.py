"""Behind a pooler in transaction mode (docs/SCALING.md, 3a): with
CAURI_DATABASE_PREPARED_STATEMENTS off no statement is left named on a server connection,
where another client's transaction would find it; tools/through-pgbouncer runs a part of the
suite through PgBouncer itself."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from cauri.app import create_app
from cauri.kit.db import make_engine, make_sessionmaker
from cauri.runtime import Runtime
from tests.support import make_merchant, momo_body, scalar

# A session's named statements; the unnamed one is not among them.
NAMED = "SELECT count(*) FROM pg_prepared_statements"


@asynccontextmanager
async def on_one_connection(
    runtime: Runtime, *, prepared_statements: bool
) -> AsyncIterator[Runtime]:
    """The runtime on a pool that keeps one connection: used one request at a time, every
    statement runs on it, and so does the count of its named statements."""
    url = runtime.engine.url.render_as_string(hide_password=False)
    engine = make_engine(url, pool_size=1, prepared_statements=prepared_statements)
    try:
        yield dataclasses.replace(runtime, engine=engine, sessionmaker=make_sessionmaker(engine))
    finally:
        await engine.dispose()


@pytest.mark.parametrize("prepared_statements", [True, False])
async def test_statements_are_named_only_when_prepared_statements_are_on(
    runtime: Runtime, prepared_statements: bool
) -> None:
    async with on_one_connection(runtime, prepared_statements=prepared_statements) as pooled:
        merchant = await make_merchant(pooled)
        transport = httpx.ASGITransport(app=create_app(pooled))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            # The hot path's own statements (kit.prepared) and the session's.
            paid = await client.post(
                "/api/v1/payments", json=momo_body(), headers=merchant.headers()
            )
            assert paid.status_code == 201, paid.text
            listed = await client.get("/api/v1/payments", headers=merchant.headers())
            assert listed.status_code == 200, listed.text
        named = await scalar(pooled, NAMED)
    assert (named > 0) is prepared_statements
