"""Migration 0041 on a database that has history already: the rows so far become each
table's legacy partition, as they were, and what is written afterwards goes on from them
(ids, keys, the ledger's checks)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
import pytest
from alembic import command

from cauri.kit import migrate
from cauri.kit.db import as_asyncpg

BEFORE = "0040_receivables_index"
AT = datetime(2026, 10, 15, 12, tzinfo=UTC)  # the history's instant, before the migration

_HISTORY = """
INSERT INTO merchants (id, name, status, created_at)
    VALUES ('mer_old', 'Ancienne', 'active', $1);
INSERT INTO events (id, merchant_id, livemode, type, data, created_at)
    VALUES ($2, 'mer_old', false, 'payment.succeeded', '{}', $1);
INSERT INTO webhook_deliveries (id, event_id, merchant_id, livemode, event, url, status,
    attempts, series_attempts, created_at) VALUES ($2, $2, 'mer_old', false,
    'payment.succeeded', 'https://m.example/hook', 'success', 1, 1, $1);
INSERT INTO webhook_attempts (delivery_id, number, started_at, duration_ms, response_code)
    VALUES ($2, 1, $1, 12, 200);
INSERT INTO operator_operations (id, livemode, connector, operator, action, subject,
    subject_ref, request, status, created_at, updated_at) VALUES ($2, true, 'mtn', 'MTN_BJ',
    'collect', 'payment', 'p1', '{}', 'succeeded', $1, $1);
INSERT INTO operator_exchanges (operation_id, connector, action, method, url, duration_ms,
    created_at) VALUES ($2, 'mtn', 'collect', 'POST', 'https://op.example', 5, $1);
WITH t AS (INSERT INTO ledger_transactions (kind, reference, livemode, created_at)
    VALUES ('payment', 'p1', true, $1) RETURNING id)
INSERT INTO ledger_postings (transaction_id, account, currency, amount)
    SELECT t.id, a, 'XOF', n FROM t, (VALUES ('operator:mtn:clearing:live:XOF', -1000),
    ('merchant:mer_old:available:live:XOF', 1000)) AS p(a, n);
"""


@pytest.fixture
async def old_database(database_url: str) -> AsyncIterator[str]:
    """A database of its own at the revision before 0041 (the suite's is at head)."""
    server = as_asyncpg(database_url).rsplit("/", 1)[0]
    name = f"m0041_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(f"{server}/postgres".replace("+asyncpg", ""))
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = f"{server}/{name}"
    try:
        await asyncio.to_thread(command.upgrade, migrate.alembic_config(url), BEFORE)
        yield url
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def test_the_history_so_far_becomes_the_legacy_partitions(old_database: str) -> None:
    plain = old_database.replace("+asyncpg", "")
    connection = await asyncpg.connect(plain)
    try:
        event, operation = uuid.uuid4(), uuid.uuid4()
        await connection.execute("BEGIN")
        for statement in _HISTORY.split(";\n"):
            if statement.strip():
                # $1 the instant, $2 a row's id (the operation's, else the event's).
                row = operation if "operator_" in statement else event
                arguments = (AT, row)[: 2 if "$2" in statement else 1]
                await connection.execute(statement, *arguments)
        await connection.execute("COMMIT")
        old_exchange = await connection.fetchval("SELECT max(id) FROM operator_exchanges")

        await migrate.upgrade_async(old_database)

        for table in ("events", "webhook_deliveries", "webhook_attempts", "ledger_postings"):
            held = await connection.fetch(f"SELECT tableoid::regclass::text AS p FROM {table}")  # noqa: S608
            assert {row["p"] for row in held} == {f"{table}_legacy"}, table
        # The month of the history and the one of the migration are the legacy partition's.
        bound = await connection.fetchval(
            "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE relname = 'events_legacy'"
        )
        assert bound.startswith("FOR VALUES FROM (MINVALUE) TO ('")
        posted = await connection.fetch("SELECT created_at FROM ledger_postings")
        assert {row["created_at"] for row in posted} == {AT}
        attempt = await connection.fetchval("SELECT delivery_created_at FROM webhook_attempts")
        assert attempt == AT
        # Ids go on after the legacy rows: the identity became a sequence of the table's own.
        new = await connection.fetchval(
            "INSERT INTO operator_exchanges (connector, action, method, url, duration_ms, "
            "created_at) VALUES ('mtn', 'collect', 'GET', 'https://op.example', 1, now()) "
            "RETURNING id"
        )
        assert new > old_exchange
        owned = await connection.fetchval(
            "SELECT pg_get_serial_sequence('operator_exchanges', 'id')"
        )
        assert owned == "public.operator_exchanges_id_seq"
        # The legacy event's delivery is still its only one (the key and the foreign key).
        with pytest.raises(asyncpg.UniqueViolationError):
            await connection.execute(
                "INSERT INTO webhook_deliveries (id, event_id, merchant_id, livemode, event, "
                "url, status, attempts, series_attempts, created_at) SELECT gen_random_uuid(), "
                "id, merchant_id, false, type, 'u', 'pending', 0, 0, created_at FROM events"
            )
    finally:
        await connection.close()
