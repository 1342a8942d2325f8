"""A statement file into `operator_statements` and `statement_lines`, streamed: read in the
format named, else its connector kind's (cauri.reconciliation.formats), written by COPY in
batches, never held whole."""

from __future__ import annotations

import csv
import hashlib
import io
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from itertools import islice
from pathlib import Path

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit import log
from cauri.audit.actor import Actor
from cauri.kit.errors import Conflict, InvalidRequest, NotFound
from cauri.models import ConnectorAccount
from cauri.models.statements import OperatorStatement
from cauri.reconciliation import formats
from cauri.reconciliation.days import Days
from cauri.reconciliation.lines import Line

BATCH = 5000
_COLUMNS = (
    "statement_id",
    "line",
    "operator_id",
    "reference",
    "kind",
    "status",
    "amount",
    "fee",
    "currency",
    "phone_number",
    "at",
)


@dataclass(frozen=True)
class Imported:
    statement_id: uuid.UUID
    connector: str
    format: str
    lines: int
    first_day: date | None
    last_day: date | None


def digest_of(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


_ONE_AT_A_TIME = text("SELECT pg_advisory_xact_lock(7246, hashtext(:connector || :digest))")


async def import_file(
    session: AsyncSession,
    connector: str,
    path: Path,
    actor: Actor,
    now: datetime,
    days: Days,
    covers: date | None = None,
    format_name: str | None = None,
) -> Imported:
    """Reads `path` in `format_name`, by default as `connector`'s operator writes its
    statements (Cauri's own CSV for an operator that publishes no format); the same file
    twice is refused (409), a line that cannot be read refuses the whole file (400, its line
    named), with nothing kept. `covers`: a day the statement was asked for, which it covers
    whatever its lines' days (a fetched day without a line)."""
    account = await session.get(ConnectorAccount, connector)
    if account is None:
        raise NotFound(f"Aucun connecteur {connector}.")
    format_name = format_name or formats.default_for(account.kind)
    read = formats.BY_NAME.get(format_name)
    if read is None:
        known = ", ".join(formats.BY_NAME)
        raise InvalidRequest(f"Format de relevé inconnu : {format_name} ({known}).")
    digest = digest_of(path)
    # The same file twice at once (two fetches of a day): the second waits for the first's
    # commit, then finds it.
    await session.execute(_ONE_AT_A_TIME, {"connector": connector, "digest": digest})
    taken = await session.scalar(
        select(OperatorStatement.id).where(
            OperatorStatement.connector == connector, OperatorStatement.digest == digest
        )
    )
    if taken is not None:
        raise Conflict(f"Ce fichier est déjà importé (relevé {taken}).")
    statement = OperatorStatement(
        id=uuid.uuid4(),
        connector=connector,
        format=format_name,
        name=path.name,
        digest=digest,
        lines=0,
        opening_balances={},
        closing_balances={},
        imported_by=actor.name,
        imported_at=now,
    )
    session.add(statement)
    await session.flush()
    with path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
        try:
            reading = read(text)
            covered = await _copy(session, statement.id, reading.lines, days)
        except (UnicodeDecodeError, csv.Error) as error:
            # Not UTF-8 (an export saved in another encoding), or not CSV.
            raise InvalidRequest(f"Relevé illisible : {error}.") from None
    statement.lines = covered.count
    if covers is not None:
        covered.cover(covers)
    statement.first_day, statement.last_day = covered.first, covered.last
    statement.opening_balances = reading.opening_balances
    statement.closing_balances = reading.closing_balances
    await log.record(
        session,
        actor,
        "statement.imported",
        "operator_statement",
        str(statement.id),
        None,
        {
            "connector": connector,
            "name": path.name,
            "format": format_name,
            "digest": digest,
            "lines": covered.count,
        },
        at=now,
    )
    return Imported(
        statement.id, connector, format_name, covered.count, covered.first, covered.last
    )


@dataclass
class _Covered:
    """The platform's days a statement's lines fall on (cauri.reconciliation.days)."""

    days: Days
    count: int = 0
    first: date | None = None
    last: date | None = None

    def saw(self, line: Line) -> None:
        self.count += 1
        self.cover(self.days.of(line.at))

    def cover(self, day: date) -> None:
        self.first = day if self.first is None else min(self.first, day)
        self.last = day if self.last is None else max(self.last, day)


async def _copy(
    session: AsyncSession, statement_id: uuid.UUID, lines: Iterator[Line], platform_days: Days
) -> _Covered:
    connection = await session.connection()
    driver = (await connection.get_raw_connection()).driver_connection
    assert driver is not None
    days = _Covered(platform_days)
    numbered = enumerate(lines, start=1)
    while batch := list(islice(numbered, BATCH)):
        await driver.copy_records_to_table(
            "statement_lines", records=_records(statement_id, batch, days), columns=_COLUMNS
        )
    return days


def _records(
    statement_id: uuid.UUID, batch: Iterable[tuple[int, Line]], days: _Covered
) -> list[tuple[object, ...]]:
    records: list[tuple[object, ...]] = []
    for number, line in batch:
        days.saw(line)
        records.append(
            (
                statement_id,
                number,
                line.operator_id,
                line.reference,
                line.kind.value,
                line.status.value,
                line.amount,
                line.fee,
                line.currency,
                line.phone_number,
                line.at,
            )
        )
    return records
