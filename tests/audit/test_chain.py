"""The audit log as a hash chain (issue 23): the table's owner may drop the append-only
trigger, but a changed, deleted or inserted entry breaks the chain, and `cauri audit verify`
names the first entry where it breaks; a hash kept elsewhere (an export's) anchors the log
against a rewrite of its end."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import uuid
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
from alembic import command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import create_async_engine

from cauri.audit import chain
from cauri.audit.actor import Actor
from cauri.audit.log import record
from cauri.kit import migrate
from cauri.kit.db import make_sessionmaker, unit_of_work
from cauri.models import AuditEntry
from cauri.runtime import Runtime
from tests.audit.builders import entries
from tests.foundation.builders import run_cli

AWA = Actor.staff("awa@cauri.example", uuid.uuid4())


async def _append(runtime: Runtime, count: int = 1, **after: Any) -> None:
    for number in range(count):
        async with unit_of_work(runtime.sessionmaker) as session:
            await record(
                session,
                AWA,
                "merchant.set_limits",
                "merchant",
                f"mer_{number}",
                {"daily": number},
                {"daily": number + 1, **after},
                "plafond revu",
                at=runtime.clock.now(),
            )


async def _verify(runtime: Runtime, *anchors: str) -> chain.Verdict:
    async with runtime.sessionmaker() as session:
        return await chain.verify(session, anchors)


async def _as_owner(runtime: Runtime, *statements: str) -> None:
    """What the table's owner may do: drop the append-only trigger, change the rows, and put
    the trigger back as if nothing happened."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(text("DROP TRIGGER audit_log_no_change ON audit_log"))
        for statement in statements:
            await session.execute(text(statement))
        await session.execute(
            text(
                "CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log "
                "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
            )
        )


async def test_each_entry_is_chained_to_the_one_before(runtime: Runtime) -> None:
    await _append(runtime, 3)
    written = await entries(runtime)
    assert [entry["id"] for entry in written] == [1, 2, 3]
    async with runtime.sessionmaker() as session:
        stored = (await session.scalars(select(AuditEntry).order_by(AuditEntry.id))).all()
    previous = chain.GENESIS
    for entry in stored:
        assert entry.previous_hash == previous
        assert entry.chain_hash == chain.entry_hash(previous, entry)
        previous = entry.chain_hash
    verdict = await _verify(runtime)
    assert (verdict.intact, verdict.entries, verdict.head_id) == (True, 3, 3)
    assert verdict.head_hash == stored[-1].chain_hash


async def test_fifty_simultaneous_audited_actions_make_one_chain_without_fork(
    runtime: Runtime, database_url: str
) -> None:
    # Ten connections of their own: the database server is shared, its clients counted.
    engine = create_async_engine(database_url, pool_size=10, max_overflow=0)
    sessionmaker = make_sessionmaker(engine)

    class GaveUp(Exception):
        pass

    async def act(number: int) -> bool:
        try:
            async with unit_of_work(sessionmaker) as session:
                await record(
                    session, AWA, "payout.approve", "payout", f"pyo_{number}", None,
                    {"approvals": 1}, at=runtime.clock.now(),
                )  # fmt: skip
                if number % 10 == 9:
                    raise GaveUp  # its entry goes with it: a gap in the ids, not in the chain
        except GaveUp:
            return False
        return True

    try:
        kept = await asyncio.gather(*(act(number) for number in range(50)))
    finally:
        await engine.dispose()

    assert sum(kept) == 45
    verdict = await _verify(runtime)
    assert (verdict.intact, verdict.entries) == (True, 45)
    async with runtime.sessionmaker() as session:
        previous = (await session.scalars(select(AuditEntry.previous_hash))).all()
    assert len(set(previous)) == len(previous) == 45  # no two entries follow the same one


@pytest.mark.parametrize(
    ("tampering", "broken_id", "problem"),
    [
        (
            ["UPDATE audit_log SET reason = 'rien à signaler' WHERE id = 2"],
            2,
            "its content no longer matches its hash: changed",
        ),
        (
            ["DELETE FROM audit_log WHERE id = 2"],
            4,
            "it does not follow entry 1: an entry between them deleted, or one of them inserted",
        ),
        (
            ["DELETE FROM audit_log WHERE id = 1"],
            2,
            "it is the first entry but follows another: entries before it deleted",
        ),
        (
            # Into the gap a rolled-back action left (id 3), with a hash of its own making.
            [
                "INSERT INTO audit_log (id, at, actor_kind, actor_name, action, resource_type, "
                "resource_id, previous_hash, chain_hash) SELECT 3, at, 'cli', 'cli:root', "
                "'merchant.credit', 'merchant', 'mer_1', repeat('a', 64), repeat('b', 64) "
                "FROM audit_log WHERE id = 2"
            ],
            3,
            "it does not follow entry 2: an entry between them deleted, or one of them inserted",
        ),
    ],
    ids=["changed", "deleted", "first-deleted", "inserted"],
)
async def test_cauri_audit_verify_names_the_first_entry_the_owner_tampered_with(
    runtime: Runtime,
    database_url: str,
    tampering: list[str],
    broken_id: int,
    problem: str,
) -> None:
    await _append(runtime, 2)
    with pytest.raises(RuntimeError):
        async with unit_of_work(runtime.sessionmaker) as session:
            await record(session, AWA, "merchant.credit", "merchant", "mer_1", None, {},
                         at=runtime.clock.now())  # fmt: skip
            raise RuntimeError("rolled back: id 3 is never used")
    await _append(runtime, 2)
    assert [entry["id"] for entry in await entries(runtime)] == [1, 2, 4, 5]
    untouched = await run_cli(database_url, "audit", "verify")
    assert untouched.exit_code == 0, untouched.stderr
    head = (await entries(runtime))[-1]["chain_hash"]
    assert untouched.stdout == f"audit log intact: 4 entries, head {head} (entry 5)\n"

    await _as_owner(runtime, *tampering)

    checked = await run_cli(database_url, "audit", "verify", "--json")
    assert checked.exit_code == 1, checked.stderr
    result = json.loads(checked.stdout)
    assert result["intact"] is False
    assert result["broken"] == {"entry_id": broken_id, "problem": problem}
    shown = await run_cli(database_url, "audit", "verify")
    assert shown.exit_code == 1
    assert f"first broken entry: {broken_id}: {problem}" in shown.stdout


async def _rewrite_from(runtime: Runtime, first_id: int) -> None:
    """The owner's thorough forgery: changes an entry and hashes the chain again from it."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(text("DROP TRIGGER audit_log_no_change ON audit_log"))
        stored = (await session.scalars(select(AuditEntry).order_by(AuditEntry.id))).all()
        previous = chain.GENESIS
        for entry in stored:
            if entry.id == first_id:
                entry.reason = "rien à signaler"
            if entry.id >= first_id:
                entry.previous_hash = previous
                entry.chain_hash = chain.entry_hash(previous, entry)
            previous = entry.chain_hash
        await session.flush()
        await session.execute(
            text(
                "CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log "
                "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
            )
        )


@pytest.mark.parametrize("forgery", ["last-entries-deleted", "rewritten"])
async def test_a_days_export_anchors_the_log_against_a_rewrite_of_its_end(
    runtime: Runtime, database_url: str, forgery: str
) -> None:
    await _append(runtime, 3)
    day = runtime.clock.now().date().isoformat()
    exported = await run_cli(database_url, "audit", "export", "--from", day, "--to", day)
    assert exported.exit_code == 0, exported.stderr
    header, *rows = csv.reader(io.StringIO(exported.stdout))
    assert header[-1] == "chain_hash"
    # The file ends with the export's own entry, the log's head as the file was written.
    anchor = rows[-1][-1]
    verdict = await _verify(runtime)
    assert (verdict.head_id, verdict.head_hash) == (4, anchor)
    kept = await run_cli(database_url, "audit", "verify", "--anchor", anchor.upper())
    assert kept.exit_code == 0, kept.stdout
    assert f"anchor {anchor}: entry 4" in kept.stdout

    if forgery == "last-entries-deleted":
        await _as_owner(runtime, "DELETE FROM audit_log WHERE id >= 3")
    else:
        await _rewrite_from(runtime, 2)

    # The chain alone cannot tell: what is left, or what was hashed again, holds together.
    assert (await _verify(runtime)).broken is None
    checked = await run_cli(database_url, "audit", "verify", "--anchor", anchor)
    assert checked.exit_code == 1
    assert f"anchor {anchor}: NOT in the chain" in checked.stdout


# What PostgreSQL can store in text: no NUL, and no lone surrogate (UTF-8 has none).
_CHARACTERS = st.characters(codec="utf-8", exclude_characters="\x00")
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(_CHARACTERS),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(_CHARACTERS), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=40,
    deadline=None,
    # `runtime` only lends its sessionmaker; the chain grows across examples, as in life.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(values=st.dictionaries(st.sampled_from(["a", "b", "amount", "rate"]), _JSON))
async def test_what_postgresql_gives_back_hashes_as_it_was_written(
    runtime: Runtime, values: dict[str, Any]
) -> None:
    """JSONB keeps a number's decimal, not Python's float: 1e20 comes back as an integer."""
    await _append(runtime, **values)
    verdict = await _verify(runtime)
    assert verdict.broken is None, values


async def test_the_migration_chains_the_entries_written_before_it(database_url: str) -> None:
    name = f"cauri_test_{uuid.uuid4().hex[:10]}"
    server = database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
    admin = await asyncpg.connect(server)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = database_url.rsplit("/", 1)[0] + f"/{name}"
    engine = create_async_engine(url, pool_size=1, max_overflow=0)
    try:
        config = migrate.alembic_config(url)
        await asyncio.to_thread(command.upgrade, config, "0026_audit_chain-1")
        async with engine.begin() as connection:
            for number in range(3):
                await connection.execute(
                    text(
                        "INSERT INTO audit_log (at, actor_kind, actor_name, action, "
                        "resource_type, resource_id, before, after) VALUES (now(), 'cli', "
                        "'cli:root', 'merchant.set_fee', 'merchant', :id, NULL, "
                        "CAST(:after AS jsonb))"
                    ),
                    {"id": f"mer_{number}", "after": json.dumps({"rate": 1e20, "n": number})},
                )
        await asyncio.to_thread(command.upgrade, config, "head")

        async with make_sessionmaker(engine)() as session:
            verdict = await chain.verify(session)
            assert (verdict.intact, verdict.entries, verdict.head_id) == (True, 3, 3)
            await record(session, AWA, "merchant.set_fee", "merchant", "mer_0", None, None,
                         at=datetime.now(UTC))  # fmt: skip
            await session.commit()
            assert (await chain.verify(session)).entries == 4
            assert (await chain.verify(session)).intact
    finally:
        await engine.dispose()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
