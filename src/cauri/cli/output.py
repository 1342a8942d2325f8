"""What the CLI's commands share to print: `--json` (one JSON document, stable keys) or text
for people (aligned tables, `key: value` lines)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, TypeVar

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.runtime import Runtime

T = TypeVar("T")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def in_transaction(work: Callable[[AsyncSession, Runtime], Awaitable[T]]) -> T:
    # Imported when run: the package imports the modules that define its commands.
    from cauri.cli import _in_transaction

    return _in_transaction(work)


def echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, default=str))


def echo_table(rows: Sequence[dict[str, Any]], columns: Sequence[str], indent: str = "") -> None:
    """One line per row under a header, each column as wide as its widest cell; an empty cell
    is `-`."""
    cells = [list(columns), *([_cell(row[c]) for c in columns] for row in rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    for line in cells:
        aligned = "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        typer.echo(indent + aligned.rstrip())


def _cell(value: Any) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
