"""When to ask an operator again about a request whose outcome is unknown (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta


def next_poll(
    *,
    polls_done: int,
    delays: Sequence[float],
    interval: float,
    horizon: float,
    sent_at: datetime,
    now: datetime,
) -> datetime | None:
    """The instant of the next status query after `polls_done` of them, or None once the
    horizon is passed: then the request is handed to a person."""
    delay = delays[polls_done] if polls_done < len(delays) else interval
    due = now + timedelta(seconds=delay)
    if due > sent_at + timedelta(seconds=horizon):
        return None
    return due
