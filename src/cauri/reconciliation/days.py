"""The platform's days (CAURI_TIME_ZONE, UTC unless set): a reconciliation run matches one
of them, a statement covers some of them, the daily run falls due at an hour of them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo


@dataclass(frozen=True)
class Days:
    zone: ZoneInfo

    def start(self, day: date) -> datetime:
        """The day's first instant, in UTC."""
        return datetime.combine(day, time(), tzinfo=self.zone).astimezone(UTC)

    def bounds(self, day: date) -> tuple[datetime, datetime]:
        """The day's first instant and the next day's."""
        return self.start(day), self.start(day + timedelta(days=1))

    def of(self, instant: datetime) -> date:
        return instant.astimezone(self.zone).date()

    def at(self, day: date, hour: time) -> datetime:
        return datetime.combine(day, hour, tzinfo=self.zone).astimezone(UTC)


UTC_DAYS = Days(ZoneInfo("UTC"))
