"""`cauri archive --before YYYY-MM`: the history's months before YYYY-MM leave the database,
each partition kept as a pg_dump file that was read back and found equal to it.

For each partitioned table (attempts before their deliveries, deliveries before their
events: the foreign keys), each partition entirely before the month (a month's, or the
legacy one once its end is reached):
1. `pg_dump -Fc -t <partition>` into the folder given, while it is still attached;
2. the check: `pg_restore --data-only -f -` reads the file back, and its rows must be, line
   for line (sorted), the partition's `COPY … TO STDOUT`: the file restores what was there;
3. in one transaction, the partition detached and dropped and, for ledger postings, its month marked
   archived, so that from that commit every read that sums postings adds that month's
   carried amounts (the view `ledger_archived`) instead of the rows.
Ledger postings leave only from closed months (`cauri ledger close`), whose postings are all
folded: balances (a head plus its postings not folded) are untouched. A month leaves only
once it is CAURI_HISTORY_RETENTION_MONTHS behind the current one. Nothing is dropped when a
dump or its check fails: run it again."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.history.partitions import PARTITIONED
from cauri.kit.db import unit_of_work
from cauri.kit.embedded_pg import PROGRAMS
from cauri.kit.errors import CauriError, Conflict, InvalidRequest
from cauri.kit.months import Month
from cauri.kit.partitions import Partition, partitions
from cauri.ledger import periods
from cauri.runtime import Runtime

# Referencing tables before the tables they reference.
ORDER = (
    "webhook_attempts",
    "webhook_deliveries",
    "events",
    "operator_exchanges",
    "ledger_postings",
)
assert set(ORDER) == set(PARTITIONED)
LOCK_TIMEOUT = "5s"


class ArchiveFailed(CauriError):
    code, http_status = "archive_failed", 500
    default_message = "L'archive n'a pas pu être écrite ou relue : rien n'a été supprimé."


@dataclass(frozen=True)
class Archived:
    table: str
    partition: str
    rows: int
    file: Path


async def archive_before(
    runtime: Runtime, before: Month, folder: Path, now: datetime
) -> list[Archived]:
    """Every partition before `before`, archived in `folder` then dropped (the steps above);
    again: nothing more."""
    retention = runtime.settings.history_retention_months
    if before > Month.of(now).plus(-retention):
        raise InvalidRequest.field(
            "before",
            f"{before} est dans les {retention} derniers mois (CAURI_HISTORY_RETENTION_MONTHS) : "
            f"au plus {Month.of(now).plus(-retention)}.",
        )
    async with runtime.sessionmaker() as session:
        closed = set(await periods.closed_months(session))
        leaving = {table: await _leaving(session, table, before) for table in ORDER}
    for partition in leaving["ledger_postings"]:
        if _period(partition) not in closed:
            raise Conflict(
                f"Le mois {_period(partition)} du grand livre n'est pas clos "
                f"(cauri ledger close {_period(partition)})."
            )
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    done = []
    for table in ORDER:
        for partition in leaving[table]:
            done.append(await _archive(runtime, table, partition, folder, now))
    return done


def _period(partition: Partition) -> Month:
    """The closed month a postings' partition belongs to (ledger.periods' labels)."""
    assert partition.end is not None
    return Month.of(partition.end).plus(-1)


async def _leaving(session: AsyncSession, table: str, before: Month) -> list[Partition]:
    return [
        p for p in await partitions(session, table) if p.end is not None and p.end <= before.start
    ]


async def _archive(
    runtime: Runtime, table: str, partition: Partition, folder: Path, now: datetime
) -> Archived:
    file = folder / f"{partition.name}.dump"
    url = _libpq(runtime)
    await _run(runtime, "pg_dump", "-Fc", "-t", f'public."{partition.name}"', "-f", str(file), url)
    restored = _rows_in(await _run(runtime, "pg_restore", "--data-only", "-f", "-", str(file)))
    present = await _rows_of(runtime, partition.name)
    if _digest(restored) != _digest(present):
        raise ArchiveFailed(
            f"{file} ne redonne pas {partition.name} : {len(restored)} lignes relues, "
            f"{len(present)} en base. Rien n'a été supprimé."
        )
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
        # Detached first: a foreign key into the partitioned table (an attempt's into its
        # delivery) depends on each of its partitions until then.
        await session.execute(text(f'ALTER TABLE "{table}" DETACH PARTITION "{partition.name}"'))
        await session.execute(text(f'DROP TABLE "{partition.name}"'))
        if table == periods.POSTINGS:
            await session.execute(
                text("UPDATE ledger_periods SET archived_at = :now WHERE month = :month"),
                {"now": now, "month": _period(partition).first_day},
            )
    return Archived(table, partition.name, len(present), file)


def _libpq(runtime: Runtime) -> str:
    """The database's URL as pg_dump takes it (libpq's, several hosts included)."""
    url = runtime.engine.url
    return "postgresql://" + url.render_as_string(hide_password=False).split("://", 1)[1]


async def _run(runtime: Runtime, program: str, *arguments: str) -> bytes:
    folder = runtime.settings.pg_programs or PROGRAMS
    process = await asyncio.create_subprocess_exec(
        str(folder / program),
        *arguments,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    if process.returncode != 0:
        raise ArchiveFailed(f"{program} : {err.decode(errors='replace').strip()[:500]}")
    return out


def _rows_in(script: bytes) -> list[bytes]:
    """The data lines of pg_restore's script: those between `COPY … FROM stdin;` and `\\.`."""
    rows: list[bytes] = []
    inside = False
    for line in script.split(b"\n"):
        if inside and line == b"\\.":
            inside = False
        elif inside:
            rows.append(line)
        elif line.startswith(b"COPY ") and line.endswith(b"FROM stdin;"):
            inside = True
    return rows


async def _rows_of(runtime: Runtime, partition: str) -> list[bytes]:
    """The partition's rows in COPY's text form, as pg_dump writes them."""
    chunks: list[bytes] = []

    async def collect(chunk: bytes) -> None:
        chunks.append(chunk)

    async with runtime.engine.connect() as connection:
        raw = (await connection.get_raw_connection()).driver_connection
        assert raw is not None
        await raw.copy_from_table(partition, output=collect)
    return [line for line in b"".join(chunks).split(b"\n") if line]


def _digest(rows: Sequence[bytes]) -> tuple[int, str]:
    digest = hashlib.sha256()
    for row in sorted(rows):
        digest.update(row + b"\n")
    return len(rows), digest.hexdigest()
