"""Rows one domain writes within another's statement, as CTEs (an event and its delivery, a
ledger transaction, a job), in the same round trip as the row they follow from. Each is an
INSERT ... SELECT, whose every parameter is cast: PostgreSQL does not infer them there."""

from __future__ import annotations


def per_row_of(source: str | None) -> str:
    """What makes the INSERT ... SELECT write once per row of `source`, a CTE of the caller's
    statement (None: once; a `source` without rows, an idempotent replay: nothing). Constant
    text (S608): `source` is a CTE's name, never input."""
    return f" FROM {source}" if source else ""
