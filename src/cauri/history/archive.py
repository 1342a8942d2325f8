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
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.audit.log import record
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
# What the audit log records of each partition that left.
ACTION, RESOURCE = "history.archive", "history_partition"


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
    runtime: Runtime, actor: Actor, before: Month, folder: Path, now: datetime
) -> list[Archived]:
    """Every partition before `before`, archived in `folder` then dropped (the steps above),
    each drop in the audit log with it; again: nothing more."""
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
    for partition in leaving[periods.POSTINGS]:
        assert partition.end is not None
        month = periods.period_of(partition.end)
        if month not in closed:
            raise Conflict(
                f"Le mois {month} du grand livre n'est pas clos (cauri ledger close {month})."
            )
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    done = []
    for table in ORDER:
        for partition in leaving[table]:
            done.append(await _archive(runtime, actor, table, partition, folder, now))
    return done


async def _leaving(session: AsyncSession, table: str, before: Month) -> list[Partition]:
    return [
        p for p in await partitions(session, table) if p.end is not None and p.end <= before.start
    ]


async def _archive(
    runtime: Runtime, actor: Actor, table: str, partition: Partition, folder: Path, now: datetime
) -> Archived:
    file = folder / f"{partition.name}.dump"
    await _dumped(runtime, partition.name, file)
    restored = await _restored(runtime, file)
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
        # Read as it is dropped: no write between the check and the drop (a retried delivery
        # of that month would otherwise write an attempt the dump does not hold).
        await session.execute(text(f'LOCK TABLE "{partition.name}" IN EXCLUSIVE MODE'))
        present = await _present(session, partition.name)
        if restored != present:
            raise ArchiveFailed(
                f"{file} ne redonne pas {partition.name} : {restored.rows} lignes relues, "
                f"{present.rows} en base. Rien n'a été supprimé."
            )
        # Detached first: a foreign key into the partitioned table (an attempt's into its
        # delivery) depends on each of its partitions until then.
        await session.execute(text(f'ALTER TABLE "{table}" DETACH PARTITION "{partition.name}"'))
        await session.execute(text(f'DROP TABLE "{partition.name}"'))
        if table == periods.POSTINGS:
            assert partition.end is not None  # `_leaving`'s: a range's end
            await session.execute(
                text("UPDATE ledger_periods SET archived_at = :now WHERE month = :month"),
                {"now": now, "month": periods.period_of(partition.end).first_day},
            )
        await record(
            session,
            actor,
            ACTION,
            RESOURCE,
            partition.name,
            {"table": table, "rows": present.rows},
            None,
            f"archivé dans {file}",
            at=now,
        )
    return Archived(table, partition.name, present.rows, file)


@dataclass
class _Digest:
    """Rows counted and hashed in any order (a sum of each row's hash), as they stream."""

    rows: int = 0
    total: int = 0
    _rest: bytes = b""

    def add(self, row: bytes) -> None:
        self.rows += 1
        self.total = (self.total + int.from_bytes(hashlib.sha256(row).digest(), "big")) % _MOD

    def feed(self, chunk: bytes) -> None:
        """COPY's output, a chunk at a time: its lines, whole."""
        *lines, self._rest = (self._rest + chunk).split(b"\n")
        for line in lines:
            self.add(line)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Digest) and (self.rows, self.total) == (other.rows, other.total)


_MOD = 2**256


async def _dumped(runtime: Runtime, partition: str, file: Path) -> None:
    process = await _start(
        runtime, "pg_dump", "-Fc", "-t", f'public."{partition}"', "-f", str(file)
    )
    await _finished(process, "pg_dump")


async def _restored(runtime: Runtime, file: Path) -> _Digest:
    """The rows pg_restore reads back from `file`: the lines between each `COPY … FROM
    stdin;` and its `\\.`, streamed (a partition may be years of rows)."""
    process = await _start(runtime, "pg_restore", "--data-only", "-f", "-", str(file))
    assert process.stdout is not None
    digest, inside = _Digest(), False
    while line := await process.stdout.readline():
        line = line.rstrip(b"\n")
        if inside and line == b"\\.":
            inside = False
        elif inside:
            digest.add(line)
        elif line.startswith(b"COPY ") and line.endswith(b"FROM stdin;"):
            inside = True
    await _finished(process, "pg_restore")
    return digest


async def _present(session: AsyncSession, partition: str) -> _Digest:
    """The partition's rows in COPY's text form, as pg_dump writes them, in `session`'s
    transaction."""
    digest = _Digest()

    async def collect(chunk: bytes) -> None:
        digest.feed(chunk)

    raw = (await (await session.connection()).get_raw_connection()).driver_connection
    assert raw is not None
    await raw.copy_from_table(partition, output=collect)
    return digest


async def _start(runtime: Runtime, program: str, *arguments: str) -> asyncio.subprocess.Process:
    """`program` of CAURI_PG_PROGRAMS (else the embedded PostgreSQL's) on the database, its
    password in the environment rather than on a command line others may read."""
    url = runtime.engine.url
    libpq = "postgresql://" + url.set(password=None).render_as_string().split("://", 1)[1]
    environment = dict(os.environ)
    if url.password is not None:
        environment["PGPASSWORD"] = str(url.password)
    folder = runtime.settings.pg_programs or PROGRAMS
    return await asyncio.create_subprocess_exec(
        str(folder / program),
        *arguments,
        *((libpq,) if program == "pg_dump" else ()),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment,
        limit=_LINE_LIMIT,
    )


# A row of COPY's text is one line: an operator exchange's bodies can make it long.
_LINE_LIMIT = 64 * 1024 * 1024


async def _finished(process: asyncio.subprocess.Process, program: str) -> None:
    assert process.stderr is not None
    err = await process.stderr.read()
    if await process.wait() != 0:
        raise ArchiveFailed(f"{program} : {err.decode(errors='replace').strip()[:500]}")
