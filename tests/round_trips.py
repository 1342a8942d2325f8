"""What the app sends to PostgreSQL while a block runs, to count a hot path's round trips."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from asyncpg.connection import LoggedQuery
from sqlalchemy import event

from cauri.runtime import Runtime

# asyncpg's own queries, once per connection and type: what a parameter's type is made of.
_INTROSPECTION = (
    "SELECT current_setting('jit')",
    "SELECT set_config('jit',",
    "WITH RECURSIVE typeinfo_tree",
)


@dataclass
class Sent:
    """What the app's connections sent while the block ran, each as its first three words,
    by the two ways a query leaves: a statement through the session (SQLAlchemy's cursor);
    a query asyncpg sends itself (a read run past the session, kit.prepared, and a
    transaction's BEGIN and COMMIT). Each list is in order; the two are not interleaved
    (asyncpg reports a query once it has run, SQLAlchemy before)."""

    session: list[str] = field(default_factory=list)
    asyncpg: list[str] = field(default_factory=list)

    def all(self) -> list[str]:
        return self.session + self.asyncpg


@asynccontextmanager
async def statements(runtime: Runtime) -> AsyncIterator[Sent]:
    sent = Sent()

    def through_the_session(*params: Any) -> None:
        sent.session.append(" ".join(params[2].split()[:3]))

    def logged(query: LoggedQuery) -> None:
        words = " ".join(query.query.split()[:3])
        if not words.startswith(_INTROSPECTION):
            sent.asyncpg.append(words)

    watched: list[asyncpg.Connection] = []

    def checked_out(dbapi_connection: Any, *_: Any) -> None:
        driver: asyncpg.Connection = dbapi_connection.driver_connection
        driver.add_query_logger(logged)
        watched.append(driver)

    engine = runtime.engine.sync_engine
    event.listen(engine, "before_cursor_execute", through_the_session)
    event.listen(engine, "checkout", checked_out)
    try:
        yield sent
    finally:
        # asyncpg reports a query by `call_soon`: the last one is reported once the loop runs.
        await asyncio.sleep(0)
        event.remove(engine, "before_cursor_execute", through_the_session)
        event.remove(engine, "checkout", checked_out)
        for driver in watched:
            driver.remove_query_logger(logged)
