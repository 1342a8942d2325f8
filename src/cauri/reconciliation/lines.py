"""An operator's statement in Cauri's words: what each format's parser gives
(cauri.reconciliation.formats), whatever the operator's own columns."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum


class LineKind(StrEnum):
    """What moved the operator wallet. The first three are Cauri's own requests (the actions
    of cauri.calls); the others move it outside Cauri's operations."""

    COLLECT = "collect"
    DISBURSE = "disburse"
    REFUND = "refund"
    FEE = "fee"
    TOPUP = "topup"
    SETTLEMENT = "settlement"  # a transfer of the wallet to the platform's bank
    OTHER = "other"


OPERATIONS = (LineKind.COLLECT, LineKind.DISBURSE, LineKind.REFUND)


class LineStatus(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    PENDING = "pending"


@dataclass(frozen=True)
class Line:
    """One movement. `amount` in minor units, signed: money into the wallet is positive
    (a collection), money out negative (a disbursement, a refund, a settlement); `fee` what
    the operator took for it, positive, never included in `amount`."""

    operator_id: str
    reference: str | None  # what Cauri sent (an operation's id), when the operator gives it back
    kind: LineKind
    status: LineStatus
    amount: int
    fee: int
    currency: str
    phone_number: str | None
    at: datetime  # aware, UTC


@dataclass
class Reading:
    """A statement as a parser reads it: its lines, one at a time (a day of a busy account
    is 100,000 of them: never held whole), and the balances the operator states, known once
    the lines have been read (a file gives them last, or on every line)."""

    lines: Iterator[Line]
    opening_balances: dict[str, int] = field(default_factory=dict)
    closing_balances: dict[str, int] = field(default_factory=dict)
