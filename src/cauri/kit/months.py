"""A calendar month in UTC: a merchant's statement, the ledger's closes, the history's
partitions (migration 0041) are by month."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from cauri.kit.errors import InvalidRequest

# A month and its neighbours are dates.
_FIRST_YEAR, _LAST_YEAR = 1970, 9998


@dataclass(frozen=True, order=True)
class Month:
    """`[start, end)`, in UTC."""

    year: int
    month: int

    @classmethod
    def of(cls, moment: datetime | date) -> Month:
        day = moment.astimezone(UTC) if isinstance(moment, datetime) else moment
        return cls(day.year, day.month)

    @classmethod
    def parse(cls, text: str, field: str = "month") -> Month:
        """`2026-11`, from 1970 to 9998; refused (422 on `field`) otherwise."""
        try:
            start = datetime.strptime(text, "%Y-%m")
        except ValueError:
            start = None
        if start is None or not _FIRST_YEAR <= start.year <= _LAST_YEAR:
            raise InvalidRequest.field(field, f"Mois invalide : {text} (AAAA-MM).")
        return cls(start.year, start.month)

    @property
    def start(self) -> datetime:
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        return self.next().start

    @property
    def first_day(self) -> date:
        return date(self.year, self.month, 1)

    @property
    def name(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    def plus(self, months: int) -> Month:
        year, index = divmod(self.year * 12 + self.month - 1 + months, 12)
        return Month(year, index + 1)

    def previous(self) -> Month:
        return self.plus(-1)

    def next(self) -> Month:
        return self.plus(1)

    def __str__(self) -> str:
        return self.name
