"""The CLI starts at once (issue 24): its root names every command group with its help and
imports a group's module only when that group runs, so `cauri --help` and `import cauri.cli`
pull in no database library, web framework or migration tool."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from cauri.cli import app
from cauri.cli.lazy import Entry, LazyGroup
from tests.cli import CAURI
from tests.foundation.builders import run_cli

HEAVY = ("sqlalchemy", "fastapi", "alembic", "asyncpg", "httpx", "pydantic")


def _imported_by(statement: str) -> list[str]:
    probe = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    return [name for name in HEAVY if name in loaded]


def test_importing_the_cli_pulls_in_no_database_web_or_migration_library() -> None:
    assert _imported_by("import cauri.cli") == []


def test_pages_and_periods_need_no_web_framework() -> None:
    """The CLI's listings page and filter by period; the API's query parameters for both
    live apart (kit/page_query.py, kit/period_query.py)."""
    assert "fastapi" not in _imported_by("import cauri.kit.pagination, cauri.kit.period")


def test_a_command_that_reads_the_database_needs_no_web_framework() -> None:
    """`cauri payments show` is what an operator runs most: the services and objects it
    uses take a `Caller` (merchants/caller.py) and report invalid input
    (kit/validation_messages.py) without FastAPI, whose import alone is a third of a
    second here."""
    loaded = _imported_by("import cauri.cli.payments, cauri.cli.payouts")
    assert "fastapi" not in loaded
    assert "sqlalchemy" in loaded  # the probe sees what the command does import


async def test_showing_a_payment_loads_only_the_tables_and_modules_it_shows(
    database_url: str,
) -> None:
    """`cauri payments show` runs whole (settings, database, query, the refusal printed) with
    the tables it reads and no more: not the other tables' models (cauri.models loads a module
    when a name of it is first read), no connector or HTTP client, no domain wired (a
    read-only transaction: staff/payment_overview.py, cli/common.in_transaction)."""
    probe = (
        "import sys; from cauri.cli import app; "
        "sys.argv = ['cauri', 'payments', 'show', '00000000-0000-4000-8000-000000000000']\n"
        "try: app()\nexcept SystemExit: pass\nprint(' '.join(sorted(sys.modules)))"
    )
    url = database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
    ran = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "CAURI_DATABASE_URL": url},
    )
    assert "Paiement introuvable" in ran.stderr
    loaded = set(ran.stdout.split())
    tables = {
        name.removeprefix("cauri.models.") for name in loaded if name.startswith("cauri.models.")
    }
    assert tables == {"base", "connectors", "operations", "payments", "plans", "refunds"}
    assert not loaded & {"httpx", "fastapi", "alembic", "cauri.wiring", "cauri.connectors.service"}


def test_the_roots_help_lists_every_group_without_loading_one() -> None:
    shown = subprocess.run(
        [str(CAURI), "--help"], capture_output=True, text=True, check=True, env={"COLUMNS": "200"}
    ).stdout
    assert isinstance(app, LazyGroup)
    for name, entry in app.entries.items():
        assert f"{name} " in shown and entry.help in shown, name


@pytest.mark.parametrize("name", list(app.entries))
def test_each_entry_loads_the_command_it_names_with_the_help_the_root_shows(name: str) -> None:
    entry: Entry = app.entries[name]
    command = entry.load(name)
    assert (command.help or "").strip().startswith(entry.help), (command.help, entry.help)


async def test_a_bad_setting_is_named_before_any_command_runs_but_not_for_the_roots_help(
    database_url: str,
) -> None:
    bad = {"CAURI_WORKER_CONCURRENCY": "many"}
    refused = await run_cli(database_url, "merchants", "list", env_vars=bad)
    assert refused.exit_code == 2, refused.stdout
    assert refused.stderr.startswith("CAURI_WORKER_CONCURRENCY: ")
    assert "Traceback" not in refused.stderr
    helped = await run_cli(database_url, "merchants", "--help", env_vars=bad)
    assert helped.exit_code == 2  # a group's help runs the root's check, as before
    shown = await run_cli(database_url, "--help", env_vars=bad)
    assert shown.exit_code == 0 and "merchants" in shown.stdout
