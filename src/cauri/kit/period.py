"""The `from` and `to` of a list (DESIGN: ISO 8601 dates or timestamps), one reading for
every list that filters by creation time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import ColumnElement
from sqlalchemy.orm import InstrumentedAttribute

from cauri.kit.errors import InvalidRequest


@dataclass(frozen=True)
class Period:
    """`from` and `to` of a list (DESIGN: ISO 8601 dates or timestamps). A date
    covers its whole day in UTC; a timestamp without an offset is UTC. `end` is exclusive."""

    start: datetime | None = None
    end: datetime | None = None

    @classmethod
    def parse(cls, start: str | None, end: str | None) -> Period:
        return cls(
            None if start is None else _instant(start, "from", day_end=False),
            None if end is None else _instant(end, "to", day_end=True),
        )

    def conditions(self, created_at: InstrumentedAttribute[datetime]) -> list[ColumnElement[bool]]:
        """What keeps the rows whose `created_at` falls in the period."""
        found: list[ColumnElement[bool]] = []
        if self.start is not None:
            found.append(created_at >= self.start)
        if self.end is not None:
            found.append(created_at < self.end)
        return found


def _instant(value: str, field: str, *, day_end: bool) -> datetime:
    try:
        return _parsed_instant(value, field, day_end=day_end).astimezone(UTC)
    except OverflowError:
        # 9999-12-31 has no next day; 0001-01-01T00:00+01:00 is no UTC instant.
        raise InvalidRequest.field(
            field, f"« {value} » est hors de l'intervalle des dates admises."
        ) from None


def _parsed_instant(value: str, field: str, *, day_end: bool) -> datetime:
    try:
        day = date.fromisoformat(value)
    except ValueError:
        pass
    else:
        midnight = datetime.combine(day, time(), tzinfo=UTC)
        return midnight + timedelta(days=1) if day_end else midnight
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidRequest.field(
            field, f"« {value} » n'est ni une date ni un horodatage ISO 8601."
        ) from None
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    # Timestamps are stored to the microsecond: `to` includes its own instant.
    return instant + timedelta(microseconds=1) if day_end else instant
