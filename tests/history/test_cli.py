"""`cauri ledger close` and `cauri archive` as an operator runs them: what they refuse, and
what they say when there is nothing to do (the suite's database keeps its months: the close
and the archive themselves are in test_archive.py, on a database of their own)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import text

from cauri.kit.months import Month
from cauri.runtime import Runtime
from tests.foundation.builders import run_cli


async def test_a_month_is_written_yyyy_mm(database_url: str) -> None:
    for command in (("ledger", "close", "--through"), ("archive", "--before")):
        refused = await run_cli(database_url, *command, "2026-13")
        assert refused.exit_code == 2, refused.stdout
        assert "YYYY-MM" in refused.stderr


async def test_the_current_month_does_not_close(database_url: str) -> None:
    this = Month.of(datetime.now(UTC))
    refused = await run_cli(database_url, "ledger", "close", "--through", str(this))
    assert refused.exit_code == 1
    assert json.loads(refused.stderr)["error"]["code"] == "conflict"


async def test_a_month_within_retention_does_not_leave(database_url: str) -> None:
    this = Month.of(datetime.now(UTC))
    refused = await run_cli(database_url, "archive", "--before", str(this))
    assert refused.exit_code == 1
    error = json.loads(refused.stderr)["error"]
    assert error["code"] == "invalid_request" and "before" in error["details"]


async def test_nothing_left_before_a_month_long_past(database_url: str, tmp_path: object) -> None:
    done = await run_cli(database_url, "archive", "--before", "2020-01", "--to", str(tmp_path))
    assert done.exit_code == 0, done.stderr
    assert done.stdout.strip() == "nothing before 2020-01 is left to archive"


async def test_migrate_goes_on_when_another_process_is_making_the_months(
    database_url: str, runtime: Runtime
) -> None:
    """Two processes starting at once (`cauri serve`'s, a worker's): the one that waits past
    the lock's timeout leaves the months to the other, and still starts."""
    async with runtime.engine.connect() as holding:
        await holding.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended('cauri.history.partitions', 0))")
        )
        done = await run_cli(database_url, "migrate")
        await holding.rollback()
    assert done.exit_code == 0, done.stderr
    assert "database is up to date" in done.stdout
    assert "monthly partitions not created now" in done.stderr
