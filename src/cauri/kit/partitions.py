"""The monthly range partitions of a table (migration 0041): their names, and what each
covers, read from PostgreSQL's catalogue. Months are UTC months (cauri.kit.months)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.months import Month


def monthly(table: str, month: Month) -> str:
    """The name of `table`'s partition of `month`: `events_2026_12`."""
    return f"{table}_{month.year:04d}_{month.month:02d}"


@dataclass(frozen=True)
class Partition:
    """One partition and its range: `start` None from MINVALUE; both None: the default."""

    name: str
    start: datetime | None
    end: datetime | None

    @property
    def default(self) -> bool:
        return self.start is None and self.end is None


_BOUNDS = text(
    "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
    "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = CAST(:table AS regclass)"
)
# FOR VALUES FROM ('2026-12-01 00:00:00+00') TO ('2027-01-01 00:00:00+00'), or MINVALUE.
_RANGE = re.compile(r"FROM \((?:MINVALUE|'([^']+)')\) TO \('([^']+)'\)")


async def partitions(session: AsyncSession, table: str) -> list[Partition]:
    """`table`'s partitions, by start (the legacy one first, the default last)."""
    found = []
    for name, bound in await session.execute(_BOUNDS, {"table": table}):
        matched = _RANGE.search(bound)
        if matched is None:  # DEFAULT
            found.append(Partition(name, None, None))
            continue
        start, end = matched.groups()
        found.append(
            Partition(
                name,
                None if start is None else datetime.fromisoformat(start),
                datetime.fromisoformat(end),
            )
        )
    return sorted(found, key=lambda p: (p.default, p.start or datetime.min.replace(tzinfo=UTC)))
