"""The audit log itself (issue 14): append-only in the database, secrets never written,
searched by actor, action, resource and period, newest first and paginated, exported as
CSV oldest first."""

from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from cauri.audit.actor import Actor
from cauri.audit.export import csv_lines
from cauri.audit.log import AuditFilter, record, search
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.pagination import Page
from cauri.kit.period import Period
from cauri.runtime import Runtime
from tests.audit.builders import entries
from tests.foundation.builders import run_cli

AWA = Actor.staff("awa@cauri.example", uuid.uuid4())
CLI = Actor("cli", "cli:ops")
FIRST_PAGE = Page(1, 25)


async def _write(
    runtime: Runtime, actor: Actor, action: str, resource: str, **extra: object
) -> None:
    resource_type, _, resource_id = resource.partition(":")
    async with unit_of_work(runtime.sessionmaker) as session:
        await record(
            session,
            actor,
            action,
            resource_type,
            resource_id,
            {"status": "active"},
            {"status": "suspended", **extra},
            "contrôle KYC",
            at=runtime.clock.now(),
        )


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_log SET actor_name = 'someone else'",
        "DELETE FROM audit_log",
        "TRUNCATE audit_log",
    ],
)
async def test_the_database_refuses_to_change_or_remove_an_entry(
    runtime: Runtime, statement: str
) -> None:
    await _write(runtime, AWA, "merchant.set_status", "merchant:mer_1")
    with pytest.raises(DBAPIError, match="append-only"):
        async with unit_of_work(runtime.sessionmaker) as session:
            await session.execute(text(statement))
    [entry] = await entries(runtime)
    assert entry["actor_name"] == AWA.name


async def test_an_entry_keeps_who_what_when_and_never_a_secret(
    runtime: Runtime, clock: ManualClock
) -> None:
    await _write(
        runtime,
        AWA,
        "connector.add",
        "connector:mtn-bj",
        secrets={"api_key": "tok-1"},
        api_key="tok-2",
        webhook_secret="whsec_abcdef",
        settings={"client_secret": "tok-3", "region": "bj"},
        note="la clé sk_live_abcdefgh1234 a fuité",
        blob=b"\x00\x01",
    )
    [entry] = await entries(runtime)
    assert entry["at"] == clock.now().isoformat()
    assert (entry["actor_kind"], entry["actor_name"]) == ("staff", AWA.name)
    assert entry["staff_account_id"] == str(AWA.staff_account_id)
    assert (entry["action"], entry["resource_type"], entry["resource_id"]) == (
        "connector.add",
        "connector",
        "mtn-bj",
    )
    assert entry["reason"] == "contrôle KYC"
    assert entry["before"] == {"status": "active"}
    assert entry["after"] == {
        "status": "suspended",
        "secrets": "[redacted]",
        "api_key": "[redacted]",
        "webhook_secret": "[redacted]",
        "settings": {"client_secret": "[redacted]", "region": "bj"},
        "note": "la clé sk_live_[redacted] a fuité",
        "blob": "[redacted]",
    }
    assert not {"tok-1", "tok-2", "tok-3", "abcdef", "abcdefgh1234"} & set(
        json.dumps(entry).replace('"', " ").split()
    )


def test_the_cli_actor_is_the_os_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGNAME", "aminata")
    assert Actor.cli() == Actor("cli", "cli:aminata")
    assert Actor.cli().key == "cli:aminata"
    assert AWA.key == f"staff:{AWA.staff_account_id}"


async def test_search_by_actor_action_resource_and_period(
    runtime: Runtime, clock: ManualClock
) -> None:
    start = clock.now()
    await _write(runtime, AWA, "merchant.set_status", "merchant:mer_1")
    clock.advance(hours=1)
    await _write(runtime, CLI, "merchant.set_status", "merchant:mer_2")
    clock.advance(hours=1)
    await _write(runtime, AWA, "payout.approve", "payout:pyo_1")
    clock.advance(days=2)
    await _write(runtime, CLI, "payout.approve", "payout:pyo_1")

    async def found(page: Page = FIRST_PAGE, **wanted: Any) -> list[tuple[str, str]]:
        async with runtime.sessionmaker() as session:
            rows, total = await search(session, AuditFilter(**wanted), page)
        assert total >= len(rows)
        return [(row.actor_name, f"{row.action} {row.resource_id}") for row in rows]

    assert await found() == [  # newest first
        (CLI.name, "payout.approve pyo_1"),
        (AWA.name, "payout.approve pyo_1"),
        (CLI.name, "merchant.set_status mer_2"),
        (AWA.name, "merchant.set_status mer_1"),
    ]
    assert await found(actor=AWA.name) == [
        (AWA.name, "payout.approve pyo_1"),
        (AWA.name, "merchant.set_status mer_1"),
    ]
    assert await found(action="merchant.set_status", actor=CLI.name) == [
        (CLI.name, "merchant.set_status mer_2")
    ]
    assert await found(resource_type="payout", resource_id="pyo_1", actor=CLI.name) == [
        (CLI.name, "payout.approve pyo_1")
    ]
    assert len(await found(resource_type="merchant")) == 2
    assert await found(resource_type="merchant", resource_id="mer_unknown") == []
    period = Period(start + timedelta(minutes=30), start + timedelta(hours=3))
    assert await found(period=period) == [
        (AWA.name, "payout.approve pyo_1"),
        (CLI.name, "merchant.set_status mer_2"),
    ]
    assert await found(Page(2, 3)) == [(AWA.name, "merchant.set_status mer_1")]
    async with runtime.sessionmaker() as session:
        _, total = await search(session, AuditFilter(), Page(2, 3))
    assert total == 4


async def test_the_csv_export_is_oldest_first_and_neutralises_formulas(
    runtime: Runtime, clock: ManualClock
) -> None:
    await _write(runtime, AWA, "merchant.set_status", "merchant:mer_1")
    clock.advance(hours=1)
    async with unit_of_work(runtime.sessionmaker) as session:
        await record(
            session, CLI, "merchant.credit", "merchant", "mer_1", None, {"available": 5},
            '=HYPERLINK("http://evil")', at=clock.now(),
        )  # fmt: skip
    async with runtime.sessionmaker() as session:
        text_ = "".join([line async for line in csv_lines(session, AuditFilter())])
    header, first, second = csv.reader(io.StringIO(text_))
    assert header == [
        "id", "at", "actor_kind", "actor_name", "staff_account_id", "action",
        "resource_type", "resource_id", "reason", "before", "after", "chain_hash",
    ]  # fmt: skip
    # The new column is the last: a reader by position finds the others where they were.
    assert [first[11], second[11]] == [entry["chain_hash"] for entry in await entries(runtime)]
    assert first[3:8] == [
        AWA.name,
        str(AWA.staff_account_id),
        "merchant.set_status",
        "merchant",
        "mer_1",
    ]
    assert json.loads(first[9]) == {"status": "active"}
    assert second[8] == '\'=HYPERLINK("http://evil")'
    assert (second[4], second[9], json.loads(second[10])) == ("", "", {"available": 5})


async def test_cauri_audit_list_and_export(
    runtime: Runtime, clock: ManualClock, database_url: str
) -> None:
    await _write(runtime, AWA, "merchant.set_status", "merchant:mer_1")
    clock.advance(days=-3)
    await _write(runtime, CLI, "payout.approve", "payout:pyo_1")

    listed = await run_cli(database_url, "audit", "list", "--json")
    assert [row["action"] for row in listed.rows()] == ["merchant.set_status", "payout.approve"]
    only = await run_cli(
        database_url, "audit", "list", "--resource", "payout:pyo_1", "--actor", CLI.name, "--json"
    )
    assert [row["resource_id"] for row in only.rows()] == ["pyo_1"]
    by_type = await run_cli(database_url, "audit", "list", "--resource", "merchant", "--json")
    assert [row["resource_id"] for row in by_type.rows()] == ["mer_1"]
    second_page = await run_cli(
        database_url, "audit", "list", "--limit", "1", "--page", "2", "--json"
    )
    assert [row["resource_id"] for row in second_page.rows()] == ["pyo_1"]

    shown = await run_cli(database_url, "audit", "list", "--action", "merchant.set_status")
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.splitlines()[1:] == [
        "  reason: contrôle KYC",
        "  status: active -> suspended",
    ]
    assert f"{AWA.name}  merchant.set_status  merchant:mer_1" in shown.stdout
    none = await run_cli(database_url, "audit", "list", "--actor", "nobody")
    assert none.stdout == "no audit entry\n"
    bad = await run_cli(database_url, "audit", "list", "--from", "hier")
    assert bad.error()["code"] == "invalid_request"

    day = (clock.now() + timedelta(days=3)).date().isoformat()
    exported = await run_cli(database_url, "audit", "export", "--from", day, "--to", day)
    assert exported.exit_code == 0, exported.stderr
    header, *rows = csv.reader(io.StringIO(exported.stdout))
    # The export is itself an entry, written as the file starts: the file ends with it.
    assert header[0] == "id"
    assert [row[5] for row in rows] == ["merchant.set_status", "audit.export"]


def test_each_action_names_a_known_permission_and_a_unique_name() -> None:
    from cauri.staff.actions import ACTIONS
    from cauri.staff.roles import Permission

    assert {action.permission for action in ACTIONS} <= {p.value for p in Permission}
    assert len({action.name for action in ACTIONS}) == len(ACTIONS)
