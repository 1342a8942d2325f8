"""`cauri archive --before YYYY-MM`: the history's months before YYYY-MM, each partition
dumped, read back and checked, then dropped (cauri.history.archive)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.cli.common import with_runtime
from cauri.cli.output import JsonFlag, echo_json, echo_table

if TYPE_CHECKING:
    from cauri.kit.months import Month
    from cauri.runtime import Runtime


def parse_month(value: str, param_hint: str) -> Month:
    """A `YYYY-MM` month."""
    from cauri.kit.errors import InvalidRequest
    from cauri.kit.months import Month

    try:
        return Month.parse(value)
    except InvalidRequest:
        raise typer.BadParameter("a month, YYYY-MM", param_hint=param_hint) from None


def archive(
    before: Annotated[str, typer.Option("--before", help="The first month kept, YYYY-MM.")],
    to: Annotated[
        Path, typer.Option("--to", help="The folder of the dump files (created if needed).")
    ] = Path("archive"),
    as_json: JsonFlag = False,
) -> None:
    """Archives the history before a month: dumped, checked, then dropped. Events, webhook
    deliveries and attempts, operator exchanges and ledger postings (closed months only:
    `cauri ledger close`): each month's partition dumped into --to, read back and found
    equal, then dropped. Months within CAURI_HISTORY_RETENTION_MONTHS stay."""
    from cauri.audit.actor import Actor
    from cauri.staff import actions

    month = parse_month(before, "--before")

    async def work(runtime: Runtime) -> list[dict[str, Any]]:
        done = await actions.archive_history(runtime, Actor.cli(), month, to)
        return [
            {"table": a.table, "partition": a.partition, "rows": a.rows, "file": str(a.file)}
            for a in done
        ]

    rows = with_runtime(work)
    if as_json:
        echo_json(rows)
    elif not rows:
        typer.echo(f"nothing before {month} is left to archive")
    else:
        echo_table(rows, ("table", "partition", "rows", "file"))
