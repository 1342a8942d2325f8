"""kit.prepared: a statement of the hot path run past the session's machinery keeps what the
session gave it: its parameters processed as SQLAlchemy does (JSON), the session's
transaction when one has begun (autocommit otherwise), and a dead connection thrown away
instead of going back to the pool."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg
import pytest
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.exc import IntegrityError, PendingRollbackError

from cauri.kit.db import make_engine, make_sessionmaker
from cauri.kit.prepared import Prepared
from cauri.models import Merchant
from cauri.runtime import Runtime
from tests.support import make_merchant, scalar

_DOCUMENT_STATEMENT = text("SELECT CAST(:doc AS jsonb)").bindparams(bindparam("doc", type_=JSONB))
_DOCUMENT = Prepared(_DOCUMENT_STATEMENT)
_WRITE = Prepared(text("INSERT INTO prepared_probe (n) VALUES (:n)"))
_BACKEND = Prepared(text("SELECT pg_backend_pid()"))
NOW = datetime(2026, 11, 26, tzinfo=UTC)
# How asyncpg tells of a connection its server ended, by when it learns it.
_CONNECTION_LOST = (
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.InternalClientError,
    OSError,
)


async def test_parameters_are_processed_as_through_the_session(runtime: Runtime) -> None:
    document = {"nom": "Awa", "montant": 1500, "liste": [1, None]}
    async with runtime.sessionmaker() as session:
        [raw] = await _DOCUMENT.fetchrow(session, {"doc": document})
        through = await session.scalar(_DOCUMENT_STATEMENT, {"doc": document})
    assert raw == through == document


@pytest.fixture
async def probe(runtime: Runtime) -> None:
    async with runtime.sessionmaker() as session:
        await session.execute(text("CREATE TABLE prepared_probe (n int)"))
        await session.commit()


@pytest.mark.usefixtures("probe")
async def test_inside_the_sessions_transaction_once_begun_else_autocommit(
    runtime: Runtime,
) -> None:
    async with runtime.sessionmaker() as session:
        await _WRITE.fetchrow(session, {"n": 1})  # nothing has begun: kept at once
        await session.rollback()
    async with runtime.sessionmaker() as session:
        await session.execute(text("SELECT 1"))  # the session's transaction begins
        await _WRITE.fetchrow(session, {"n": 2})
        await session.rollback()  # takes the write with it
    assert await scalar(runtime, "SELECT array_agg(n) FROM prepared_probe") == [1]


async def test_a_dead_connection_is_not_put_back_in_the_pool(runtime: Runtime) -> None:
    async with runtime.sessionmaker() as session:
        [pid] = await _BACKEND.fetchrow(session, {})
        async with runtime.sessionmaker() as other:
            await other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            await other.commit()
        with pytest.raises(_CONNECTION_LOST):
            await _BACKEND.fetchrow(session, {})
    for _ in range(3):  # whichever connection the pool hands out next works
        async with runtime.sessionmaker() as session:
            assert (await _BACKEND.fetchrow(session, {}))[0] != pid


async def test_the_connection_is_the_one_the_session_holds_now(runtime: Runtime) -> None:
    # A pool of one connection kept: the one a session gives back is the next one handed out.
    engine = make_engine(runtime.engine.url.render_as_string(hide_password=False), pool_size=1)
    sessionmaker = make_sessionmaker(engine)
    try:
        async with sessionmaker() as session:
            [first] = await _BACKEND.fetchrow(session, {})
            await session.commit()  # its connection goes back to the pool...
            async with sessionmaker() as other:  # ...and is another session's now
                assert await other.scalar(text("SELECT pg_backend_pid()")) == first
                # The session's next transaction, begun through SQLAlchemy, holds another.
                held = await session.scalar(text("SELECT pg_backend_pid()"))
                [later] = await _BACKEND.fetchrow(session, {})
                assert later == held != first
    finally:
        await engine.dispose()


async def test_a_transaction_a_failed_flush_ended_is_refused_as_by_the_session(
    runtime: Runtime,
) -> None:
    merchant = await make_merchant(runtime)
    async with runtime.sessionmaker() as session:
        await _BACKEND.fetchrow(session, {})
        session.add(Merchant(id=merchant.id, name="twice", status="active", created_at=NOW))
        with pytest.raises(IntegrityError):
            await session.flush()
        # Its writes are gone with it: nothing may run as if the transaction still stood.
        with pytest.raises(PendingRollbackError):
            await session.execute(text("SELECT 1"))
        with pytest.raises(PendingRollbackError):
            await _BACKEND.fetchrow(session, {})
