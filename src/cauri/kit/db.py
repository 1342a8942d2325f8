"""Engine and sessions. One session per request or job, committed by its wrapper."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import asyncpg
from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

from cauri.config import Settings
from cauri.kit import embedded_pg
from cauri.kit.errors import CauriError


def database_url(settings: Settings) -> str:
    if settings.database_url is None:
        return embedded_pg.start(settings.data_dir)
    return as_asyncpg(settings.database_url)


def as_asyncpg(url: str) -> str:
    for prefix in ("postgresql+asyncpg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    return url


DEFAULT_PORT = 5432


def engine_url(url: str) -> URL:
    """The URL SQLAlchemy's asyncpg dialect takes for `url`, which may name several servers
    as libpq does (`postgresql://user@h1:5432,h2:5433/cauri?target_session_attrs=read-write`):
    SQLAlchemy reads that host list as one host with a bad port, and takes several servers
    only as `?host=h1:5432&host=h2:5433`, each with its port. asyncpg then tries them in
    order and keeps the first that `target_session_attrs` accepts."""
    scheme, separator, rest = as_asyncpg(url).partition("://")
    authority, slash, tail = rest.partition("/")
    credentials, at, hosts = authority.rpartition("@")
    if not separator or "," not in hosts:
        return make_url(as_asyncpg(url))
    single = make_url(f"{scheme}://{credentials}{at}{slash}{tail}")
    return single.update_query_dict({"host": [_with_port(host) for host in hosts.split(",")]})


def _with_port(host: str) -> str:
    if host.startswith("[") or host.count(":") > 1:
        # SQLAlchemy splits each listed host at its colons.
        raise ValueError(f"an IPv6 address cannot be one of several hosts ({host}): use a name")
    name, _, port = host.partition(":")
    if not name:
        raise ValueError("a host of the list is empty")
    return f"{name}:{port or DEFAULT_PORT}"


# Behind a pooler in transaction mode, a client's next transaction may run on another server
# connection, where a statement it named earlier does not exist (or another client's of the
# same name does). With both caches off, asyncpg and SQLAlchemy's dialect name no statement:
# each is parsed as the unnamed one, which lives only until the next, and its parse and its
# execution are one exchange that the pooler keeps on one server connection.
_UNNAMED_STATEMENTS = {"statement_cache_size": 0, "prepared_statement_cache_size": 0}


def make_engine(url: str, pool_size: int = 20, *, prepared_statements: bool = True) -> AsyncEngine:
    """`prepared_statements`: CAURI_DATABASE_PREPARED_STATEMENTS."""
    # hide_parameters: a failing statement's error text (logged) would carry the values bound
    # to it: phone numbers, customers' names, key digests.
    engine = create_async_engine(
        engine_url(url),
        pool_size=pool_size,
        max_overflow=20,
        pool_pre_ping=False,
        hide_parameters=True,
        connect_args={} if prepared_statements else _UNNAMED_STATEMENTS,
    )
    event.listen(engine.sync_engine, "checkout", _refuse_closed)
    return engine


def _refuse_closed(
    dbapi_connection: DBAPIConnection, record: ConnectionPoolEntry, proxy: PoolProxiedConnection
) -> None:
    """A pooled connection whose server went away (restarted, failed over, the backend
    terminated) is replaced at checkout by a new one from the URL's hosts, rather than failing
    the request that takes it. asyncpg knows a closed socket without a round trip, where
    pool_pre_ping would pay one at every checkout."""
    driver: asyncpg.Connection = record.driver_connection
    if driver.is_closed():
        raise DisconnectionError("the server closed this connection")


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)


@asynccontextmanager
async def unit_of_work(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    """Commits when the block ends normally, rolls back when it raises."""
    async with sessionmaker() as session:
        try:
            yield session
        except BaseException:
            await session.rollback()
            raise
        await session.commit()


T = TypeVar("T")


async def attempt(session: AsyncSession, change: Callable[[], Awaitable[T]]) -> T | CauriError:
    """The change's result, or its refusal with nothing of it kept (but what a refusal
    records as a fact: `keeps_writes`)."""
    savepoint = await session.begin_nested()
    try:
        result = await change()
    except CauriError as refusal:
        if savepoint.is_active:
            await (savepoint.commit() if refusal.keeps_writes else savepoint.rollback())
        return refusal
    if savepoint.is_active:
        await savepoint.commit()
    return result
