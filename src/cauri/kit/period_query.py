"""`from` and `to` as query parameters of the API's lists: a `Period` (cauri.kit.period)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from cauri.kit.period import Period

_FORMAT = "Date (2026-01-31) ou horodatage ISO 8601 (2026-01-31T12:00:00Z)"


def _period(
    start: Annotated[str | None, Query(alias="from", description=f"{_FORMAT}, inclus.")] = None,
    end: Annotated[
        str | None, Query(alias="to", description=f"{_FORMAT} ; une date inclut sa journée.")
    ] = None,
) -> Period:
    return Period.parse(start, end)


PeriodDep = Annotated[Period, Depends(_period)]
