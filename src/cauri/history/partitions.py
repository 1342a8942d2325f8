"""The history tables' months (migration 0041): each table is partitioned by month of one
instant column, and the months from the current one to MONTHS_AHEAD after it are created in
advance, by `cauri migrate` and then a daily job (cauri.history.tasks), so that a row is
written in its month's partition. Months are UTC months.

A month is created as a table of its own, then attached: attaching locks the partitioned
table only against other changes of its partitions, not against writes (creating a partition
in place would stop every write while it waits for the running ones); it does lock the
default partition, which the reads that cannot skip partitions by date (an account's
balance) wait for, a moment at 01:00 UTC while it is checked empty. A row of a month that
had no partition yet is in the `_default` partition: that month is then left for a person
(its rows are moved by hand, `docs/SCALING.md`) and reported, never failed on."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.months import Month
from cauri.kit.partitions import monthly, partitions

# Each partitioned table and the instant it is partitioned by.
PARTITIONED: dict[str, str] = {
    "events": "created_at",
    "webhook_deliveries": "created_at",
    "webhook_attempts": "delivery_created_at",
    "operator_exchanges": "created_at",
    "ledger_postings": "created_at",
}
MONTHS_AHEAD = 3
# A partition attached waits this long at most for the table's lock, then the next day's
# run tries again (the months ahead leave room for it).
LOCK_TIMEOUT = "2s"


@dataclass(frozen=True)
class Ahead:
    """What `ensure_ahead` did: the partitions it attached, and the months it left because
    rows of theirs are in a table's default partition (table, month)."""

    created: list[str]
    held_in_default: list[tuple[str, Month]]


async def ensure_ahead(session: AsyncSession, now: datetime, months: int = MONTHS_AHEAD) -> Ahead:
    """Every table's partitions of `now`'s month and the `months` after it (those before
    the legacy partition's end excepted). The caller commits."""
    ahead = Ahead([], [])
    await session.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
    # Two processes starting at once (`cauri serve`'s, a worker's) create each month once.
    await session.execute(
        text("SELECT pg_advisory_xact_lock(hashtextextended(:name, 0))"),
        {"name": "cauri.history.partitions"},
    )
    for table, key in PARTITIONED.items():
        existing = await partitions(session, table)
        names = {partition.name for partition in existing}
        legacy_end = next((p.end for p in existing if p.name == f"{table}_legacy"), None)
        for month in (Month.of(now).plus(n) for n in range(months + 1)):
            if monthly(table, month) in names:
                continue
            if legacy_end is not None and month.start < legacy_end:
                continue
            if await _held_in_default(session, table, key, month):
                ahead.held_in_default.append((table, month))
            else:
                ahead.created.append(await _attach(session, table, month))
    return ahead


async def _held_in_default(session: AsyncSession, table: str, key: str, month: Month) -> bool:
    held = await session.scalar(
        text(
            f'SELECT EXISTS (SELECT FROM "{table}_default" '  # noqa: S608 (our own names)
            f'WHERE "{key}" >= :start AND "{key}" < :end)'
        ),
        {"start": month.start, "end": month.end},
    )
    return bool(held)


async def _attach(session: AsyncSession, table: str, month: Month) -> str:
    name = monthly(table, month)
    start, end = month.start.isoformat(), month.end.isoformat()
    await session.execute(text(f'CREATE TABLE "{name}" (LIKE "{table}" INCLUDING DEFAULTS)'))
    await session.execute(
        text(
            f'ALTER TABLE "{table}" ATTACH PARTITION "{name}" '
            f"FOR VALUES FROM ('{start}') TO ('{end}')"
        )
    )
    return name
