"""`cauri ledger close` and `cauri archive` as an operator runs them: what they refuse, and
what they say when there is nothing to do (the suite's database keeps its months: the close
and the archive themselves are in test_archive.py, on a database of their own)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from cauri.kit.months import Month
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
