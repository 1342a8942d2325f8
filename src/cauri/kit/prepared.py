"""Statements of the hot path run as asyncpg prepared statements on the session's own
connection, past SQLAlchemy's execution machinery (unnamed, parsed at each run, when
CAURI_DATABASE_PREPARED_STATEMENTS is off: cauri.kit.db).

Why: through the session, every statement costs about 100 µs of Python above asyncpg's
prepared statement (parameters built and processed, the compiled cache looked up, a cursor
and a result wrapped, greenlet switches). Every request reads its key (a new payment, with
the fee terms of its mode in the same statement); a test payment settled at once is then
one more statement.

What stays true: the statement is SQLAlchemy's, compiled once for asyncpg, and its
parameters go through the same bind processors (JSON serialized as SQLAlchemy does). It
runs on the connection the session holds: inside the session's transaction when one has
begun (a caller that has written, a test's transaction), else on its own, before any BEGIN
(the session's first statement through SQLAlchemy opens the transaction, as it would have).
So: reads that need no snapshot shared with the request's other statements, and a write
only as a route's last step, one statement atomic on its own, with the answer built before
it (cauri.payments.service: a 500 may be retried, spec: Errors, so it must mean that
nothing was done).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import asyncpg
from sqlalchemy import ClauseElement
from sqlalchemy.dialects.postgresql import asyncpg as asyncpg_dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.sql.compiler import SQLCompiler

_DIALECT = asyncpg_dialect.dialect()  # type: ignore[no-untyped-call]
_HELD = "cauri.prepared.held"
# The server ended the connection (shut down, restarted, the backend terminated).
_ENDED_BY_THE_SERVER = (
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CannotConnectNowError,
)


class Prepared:
    """One statement, compiled once; `fetch` and `fetchrow` run it."""

    def __init__(self, statement: ClauseElement) -> None:
        compiled = statement.compile(dialect=_DIALECT)
        assert isinstance(compiled, SQLCompiler)
        self.sql = compiled.string
        # Each parameter is looked up by its key, as SQLAlchemy looks it up: a unique
        # parameter (cauri.kit.binds) is compiled under another name. One given a value
        # when it was built (a LIMIT) takes that value when none is passed.
        binds = [compiled.binds[name] for name in compiled.positiontup or ()]
        self._keys: tuple[str, ...] = tuple(bind.key for bind in binds)
        self._defaults = {bind.key: bind.value for bind in binds if not bind.required}
        self._processors: dict[str, Callable[[Any], Any]] = {}
        for bind in binds:
            # The conversion SQLAlchemy applies to a value of this type (JSON serialized, …),
            # asked of the dialect's own implementation of the type, as the docs say to.
            process = bind.type.dialect_impl(_DIALECT).bind_processor(_DIALECT)
            if process is not None:
                self._processors[bind.key] = process

    def _arguments(self, parameters: Mapping[str, Any]) -> list[Any]:
        arguments = []
        for key in self._keys:
            value = parameters[key] if key in parameters else self._defaults[key]
            process = self._processors.get(key)
            arguments.append(value if process is None else process(value))
        return arguments

    async def fetch(
        self, session: AsyncSession, parameters: Mapping[str, Any]
    ) -> list[asyncpg.Record]:
        rows: list[asyncpg.Record] = await self._run(session, "fetch", parameters)
        return rows

    async def fetchrow(
        self, session: AsyncSession, parameters: Mapping[str, Any]
    ) -> asyncpg.Record | None:
        row: asyncpg.Record | None = await self._run(session, "fetchrow", parameters)
        return row

    async def _run(self, session: AsyncSession, method: str, parameters: Mapping[str, Any]) -> Any:
        connection, driver = await _held(session)
        arguments = self._arguments(parameters)
        try:
            return await getattr(driver, method)(self.sql, *arguments)
        except asyncpg.PostgresError as error:
            if isinstance(error, _ENDED_BY_THE_SERVER):
                await _thrown_away(session, connection)
            raise
        except Exception:
            # Failing on the client's side (the socket, the protocol's state): the
            # connection cannot be trusted with another statement.
            await _thrown_away(session, connection)
            raise


async def _held(session: AsyncSession) -> tuple[AsyncConnection, asyncpg.Connection]:
    """The connection the session holds, and asyncpg's under it. Asked of SQLAlchemy once
    per transaction of the session (each ask is two greenlet hand-offs): the session keeps
    one connection until its transaction ends, and the next transaction may hold another."""
    transaction = session.sync_session.get_transaction()
    held = session.info.get(_HELD)
    # An inactive transaction (a flush failed) or a connection thrown away: SQLAlchemy is
    # asked again, and refuses as it would refuse a statement of its own.
    if (
        transaction is not None
        and held is not None
        and held[0] is transaction
        and transaction.is_active
        and not held[1].invalidated
    ):
        return held[1], held[2]
    connection = await session.connection()
    driver: asyncpg.Connection = (await connection.get_raw_connection()).driver_connection
    session.info[_HELD] = (session.sync_session.get_transaction(), connection, driver)
    return connection, driver


async def _thrown_away(session: AsyncSession, connection: AsyncConnection) -> None:
    """What SQLAlchemy does when a statement of its own finds the connection dead: closed
    and dropped from the pool, not put back for the next request to fail on."""
    session.info.pop(_HELD, None)
    await connection.invalidate()
