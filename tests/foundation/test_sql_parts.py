"""The parts one domain writes within another's statement (a ledger transaction, a guarded
debit, an event with its delivery and job, a job, a breaker's count): Core CTEs over the
caller's FROM item, their parameters unique and typed (cauri.kit.binds), so that they
compose without any convention on names, and a statement built once is compiled once."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ClauseElement, false, literal_column, select, text
from sqlalchemy.dialects.postgresql import asyncpg

from cauri.events import service as events
from cauri.kit.db import unit_of_work
from cauri.ledger import service as ledger
from cauri.models import Payment, Payout
from cauri.payments import service as payments
from cauri.payouts import service as payouts
from cauri.runtime import Runtime
from cauri.webhooks import breaker
from cauri.worker import queue
from tests.support import make_merchant, scalar

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
_DIALECT = asyncpg.dialect()  # type: ignore[no-untyped-call]


def _sql(statement: ClauseElement) -> str:
    return str(statement.compile(dialect=_DIALECT))


def _transaction(reference: str) -> ledger.NewTransaction:
    return ledger.NewTransaction(
        kind="test",
        reference=reference,
        livemode=False,
        at=NOW,
        accounts=["operator:mtn:clearing:test:XOF", "operator:moov:clearing:test:XOF"],
        currencies=["XOF", "XOF"],
        amounts=[-1_000, 1_000],
        foldeds=[False, False],
    )


def test_every_part_composes_its_parameters_cast() -> None:
    """PostgreSQL infers no parameter's type in INSERT ... SELECT: each is cast in the SQL."""
    source = select(literal_column("1").label("one")).cte("source")
    appended = ledger.appended(source)
    debited = ledger.debited(source)
    emitted = events.emitted(source)
    queued = queue.queued(source)
    counted = breaker.counted(source)
    statement = select(source.c.one).add_cte(
        appended.postings,
        debited.appended.postings,
        emitted.job,
        queued.cte,
        counted.cte,
    )
    sql = _sql(statement)
    placeholders = re.findall(r"\$\d+(::)?", sql)
    assert placeholders
    assert all(placeholders), sql
    assert sql.count("FROM source") >= 5  # each part writes once per row of the source


def test_two_parts_of_a_kind_in_one_statement_bind_apart() -> None:
    first, second = ledger.appended(None), ledger.appended(None)
    one, other = first.values(_transaction("a")), second.values(_transaction("b"))
    assert not set(one) & set(other)
    compiled = (
        select(first.postings.c.transaction_id).add_cte(second.postings).compile(dialect=_DIALECT)
    )
    names = [compiled.binds[name].key for name in compiled.positiontup or ()]
    assert set(names) == set(one) | set(other)


async def test_two_parts_of_a_kind_write_their_own_values(runtime: Runtime) -> None:
    first, second = ledger.appended(None), ledger.appended(None)
    both = select(first.transaction.c.id).add_cte(first.postings, second.postings)
    async with runtime.sessionmaker() as session:
        values = first.values(_transaction("first")) | second.values(_transaction("second"))
        await session.execute(both, values)
        await session.commit()
    references = "SELECT array_agg(reference ORDER BY reference) FROM ledger_transactions"
    assert await scalar(runtime, references) == ["first", "second"]
    assert await scalar(runtime, "SELECT count(*) FROM ledger_postings") == 4


async def test_a_source_without_rows_writes_nothing(runtime: Runtime) -> None:
    """An idempotent replay: the caller's row was not written, so neither is anything else."""
    merchant = await make_merchant(runtime)
    await _with_endpoint(runtime, merchant.id)
    none = select(literal_column("1").label("one")).where(false()).cte("none")
    appended, emitted = ledger.appended(none), events.emitted(none)
    statement = select(none.c.one).add_cte(appended.postings, emitted.job)
    emission = events.Emission(uuid.uuid4(), merchant.id, False, "payment.succeeded", {}, NOW)
    async with runtime.sessionmaker() as session:
        values = appended.values(_transaction("replay")) | emitted.values(emission)
        await session.execute(statement, values)
        await session.commit()
    for table in ("ledger_transactions", "events", "webhook_deliveries", "jobs"):
        assert await scalar(runtime, f"SELECT count(*) FROM {table}") == 0, table  # noqa: S608


async def _with_endpoint(runtime: Runtime, merchant_id: str) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text(
                "UPDATE webhook_endpoints SET url = 'https://receiver.invalid/hook' "
                "WHERE merchant_id = :id AND NOT livemode"
            ),
            {"id": merchant_id},
        )


def test_the_one_statement_writes_are_built_once_and_keep_their_cache_key() -> None:
    columns = tuple(c.name for c in Payment.__table__.c)
    decided = payments._decided(columns, with_money=True)
    assert payments._decided(columns, with_money=True) is decided
    again = payments._decided.__wrapped__(columns, with_money=True)
    assert decided.statement.sql == again.statement.sql
    paid_columns = tuple(c.name for c in Payout.__table__.c)
    paid = payouts._paid(paid_columns)
    assert payouts._paid(paid_columns) is paid
    assert paid.statement.sql == payouts._paid.__wrapped__(paid_columns).statement.sql


def test_a_composed_statement_has_one_cache_key() -> None:
    def composed() -> Any:
        appended, emitted = ledger.appended(None), events.emitted(None)
        return select(appended.transaction.c.id).add_cte(appended.postings, emitted.job)

    statement = composed()
    key = statement._generate_cache_key()
    assert key is not None
    assert statement._generate_cache_key() == key
    other = composed()._generate_cache_key()
    assert other is not None and other.key == key.key  # the same shape, the same key


async def test_a_statement_built_once_is_compiled_once(runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    cache: dict[Any, Any] = {}
    async with runtime.engine.connect() as connection:
        cached = await connection.execution_options(compiled_cache=cache)
        for _ in range(3):
            await cached.execute(
                events._EMIT,
                events._EMITTED.values(
                    events.Emission(uuid.uuid4(), merchant.id, False, "payment.succeeded", {}, NOW)
                ),
            )
        await connection.rollback()
    assert len(cache) == 1
