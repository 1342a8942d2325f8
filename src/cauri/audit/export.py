"""The audit log as CSV (`cauri audit export`), written as it is read. The last column,
`chain_hash`, is each entry's hash in the chain (cauri.audit.chain): kept elsewhere, any of
them anchors the log up to its entry (a whole day's file: up to the day's last entry), for
`cauri audit verify --anchor` to check."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.log import AuditFilter, entry_row, stream

COLUMNS = (
    "id",
    "at",
    "actor_kind",
    "actor_name",
    "staff_account_id",
    "action",
    "resource_type",
    "resource_id",
    "reason",
    "before",
    "after",
    "chain_hash",
)
# A spreadsheet runs a cell that starts so as a formula: a reason is free text.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


async def csv_lines(session: AsyncSession, wanted: AuditFilter) -> AsyncIterator[str]:
    """A header line, then one line per entry, oldest first; `before` and `after` as JSON."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def line(cells: list[str]) -> str:
        writer.writerow(cells)
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    yield line(list(COLUMNS))
    async for entry in stream(session, wanted):
        row = entry_row(entry)
        yield line([_cell(row[column]) for column in COLUMNS])


def _cell(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text
