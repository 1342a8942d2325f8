"""Test fixtures: a real, migrated PostgreSQL for the session, a clean database per test.

The database is CAURI_TEST_DATABASE_URL's server when set (a fresh database is created on
it and dropped at the end), else an embedded PostgreSQL in a temporary directory.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import structlog
from argon2 import PasswordHasher
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from cauri import wiring
from cauri.app import create_app
from cauri.config import Settings
from cauri.jobs import handlers
from cauri.kit import collector
from cauri.kit.clock import ManualClock
from cauri.kit.db import make_engine, make_sessionmaker
from cauri.people import passwords
from cauri.runtime import Runtime, operator_registry
from cauri.worker.runner import Worker
from tests.databases import fresh_database

# The app under test logs to this process's own stderr (pytest captures it), not to whatever
# sys.stdout is when a line is written: a CLI command run in this process (tests/cli.py)
# captures sys.stdout, and a server's thread would write into the command's output. Plain
# tracebacks: rich's take a second each to draw, and some tests provoke many 500s.
structlog.configure(
    processors=[
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        ),
    ],
    logger_factory=structlog.WriteLoggerFactory(file=sys.__stderr__),
)


# Tests call the services without an app or a worker too.
wiring.wire()

# Argon2id with small costs in this process (the argon2 library as it is, parameters of its
# own): the suite makes and checks hundreds of passwords, each 0.15 s of CPU at the default
# costs. The hashes carry their parameters: one made by a `cauri` subprocess (the default
# costs) is checked as made, then rehashed (cauri.people.passwords); the rehash test's
# "weak" parameters differ from these.
passwords._hasher = PasswordHasher(time_cost=1, memory_cost=4096, parallelism=1)
passwords._DECOY = passwords._hasher.hash("no account has this password")

# What is imported lives as long as the test process: frozen, a full collection never walks
# it again (as a served process does: cauri.kit.collector). Without it, every full
# collection walked every module, model and validator, seconds each.
collector.spare_what_lives_on()


@pytest.fixture(scope="session")
async def database_url() -> AsyncIterator[str]:
    async with fresh_database("cauri_test") as url:
        yield url


@pytest.fixture(scope="session")
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    # CAURI_DATABASE_PREPARED_STATEMENTS as the environment sets it (tools/through-pgbouncer).
    prepared = Settings().database_prepared_statements
    engine = make_engine(database_url, pool_size=15, prepared_statements=prepared)
    yield engine
    await engine.dispose()


# Encrypts the connector accounts' secrets in tests (CAURI_SECRET_KEY).
TEST_SECRET_KEY = "test-secret-key-of-at-least-32-characters"

TABLES_KEPT = {"alembic_version"}


# Each sequence, with the column it numbers (serial or identity), if any.
_SEQUENCES = text(
    "SELECT s.relname, t.relname, a.attname FROM pg_class s "
    "LEFT JOIN pg_depend d ON d.objid = s.oid AND d.deptype IN ('a', 'i') "
    "LEFT JOIN pg_class t ON t.oid = d.refobjid "
    "LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid "
    "WHERE s.relkind = 'S' AND s.relnamespace = 'public'::regnamespace"
)


def _restart(sequence: str, table: str | None, column: str | None) -> str:
    if table is None:
        return f"SELECT setval('\"{sequence}\"', 1, false);"
    top = f'SELECT max("{column}") FROM "{table}"'  # noqa: S608 (the schema's own names)
    return f"SELECT setval('\"{sequence}\"', coalesce(({top}), 0) + 1, false);"


@pytest.fixture(scope="session")
async def emptying(engine: AsyncEngine) -> str:
    """The statements that empty every table and restart every sequence. DELETE, not
    TRUNCATE: a test leaves a few rows, and TRUNCATE makes new files for each of the tables
    and syncs them, which was most of the cost of a short test."""
    async with engine.connect() as connection:
        tables = (
            await connection.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            )
        ).scalars()
        sequences = (await connection.execute(_SEQUENCES)).all()
        # The schema's own names (S608).
        deletes = [f'DELETE FROM "{t}";' for t in tables if t not in TABLES_KEPT]  # noqa: S608
        # Above any row a server's worker of the module inserted while the deletes ran (they
        # do not see it, it stays): restarted at 1, the sequence would give its id again.
        restarts = [_restart(name, table, column) for name, table, column in sequences]
    # Foreign keys and the audit log's refusal of deletes are triggers, which a superuser's
    # replica role skips: the tables empty in any order.
    return " ".join(
        ["BEGIN; SET LOCAL session_replication_role = replica;", *deletes, *restarts, "COMMIT;"]
    )


@pytest.fixture(autouse=True)
async def clean_database(engine: AsyncEngine, emptying: str) -> AsyncIterator[None]:
    """Every test starts from empty tables, and ends with a ledger that reconciles."""
    async with engine.connect() as connection:
        raw = await connection.get_raw_connection()
        await raw.driver_connection.execute(emptying)  # one round trip, simple protocol
    yield
    from tests.ledger_checks import assert_ledger_reconciles

    await assert_ledger_reconciles(engine)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        secret_key=TEST_SECRET_KEY,
        rate_limit="100000/minute",
        webhook_allow_private=True,
    )


@pytest.fixture
def runtime(settings: Settings, engine: AsyncEngine, clock: ManualClock) -> Runtime:
    return Runtime(
        settings=settings,
        clock=clock,
        engine=engine,
        sessionmaker=make_sessionmaker(engine),
        operators=operator_registry(settings),
    )


@pytest.fixture
async def client(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(runtime)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        yield client


@pytest.fixture
def worker(runtime: Runtime) -> Worker:
    """Runs due jobs on demand: `await worker.drain()` after moving `clock`."""
    return Worker(runtime, handlers())


@pytest.fixture
def anyio_backend() -> Iterator[str]:
    yield "asyncio"
