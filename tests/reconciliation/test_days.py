"""The platform's days (CAURI_TIME_ZONE): their bounds, the day of an instant, and when the
daily reconciliation falls due."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from cauri.reconciliation.days import UTC_DAYS, Days
from cauri.reconciliation.tasks import due

CONGO = Days(ZoneInfo("Africa/Brazzaville"))  # UTC+1 all year


def test_a_day_of_a_platform_east_of_greenwich_starts_the_evening_before_in_utc() -> None:
    assert CONGO.bounds(date(2026, 11, 3)) == (
        datetime(2026, 11, 2, 23, tzinfo=UTC),
        datetime(2026, 11, 3, 23, tzinfo=UTC),
    )
    assert UTC_DAYS.bounds(date(2026, 11, 3))[0] == datetime(2026, 11, 3, tzinfo=UTC)


def test_an_instant_is_on_the_platforms_day() -> None:
    late = datetime(2026, 11, 2, 23, 30, tzinfo=UTC)
    assert (UTC_DAYS.of(late), CONGO.of(late)) == (date(2026, 11, 2), date(2026, 11, 3))


def test_the_daily_run_falls_due_at_three_of_the_platforms_next_morning() -> None:
    day = date(2026, 11, 3)
    midnight = datetime(2026, 11, 4, tzinfo=UTC)
    assert due(day, midnight, UTC_DAYS) == 3 * 3600
    assert due(day, midnight, CONGO) == 2 * 3600
    assert due(day, datetime(2026, 11, 5, tzinfo=UTC), CONGO) == 0
