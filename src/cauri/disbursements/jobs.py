"""The payload of the jobs about one payout or refund row."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RowJob:
    reference: str
