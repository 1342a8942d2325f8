"""What the CLI's commands share to print: `--json` (one JSON document, stable keys) or text
for people (aligned tables, `key: value` lines)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

import typer

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def echo_record(data: dict[str, Any], as_json: bool) -> None:
    """One record: a JSON object, or one `key: value` line per field."""
    if as_json:
        echo_json(data)
    else:
        for key, value in data.items():
            typer.echo(f"{key}: {_cell(value)}")


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
    if isinstance(value, list | tuple | dict):
        # As the JSON output writes it, not Python's repr ([{'by': …}]).
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)
