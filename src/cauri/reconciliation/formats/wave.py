"""Wave's transactions, as its Balance & Reconciliation API lists them
(`GET /v1/transactions?date=…`, one day a call, in pages): one JSON page a line (JSON Lines),
as `cauri reconcile` saves what it fetched and as a person saves the API's answers
(docs/OPERATORS.md, "Statements").

Each item: `timestamp` (UTC), `transaction_id` (Wave's), `transaction_type`, `amount` (what
the transaction changed on the wallet, signed, its fee already taken), `fee`, `balance`
(the wallet's, after it), `currency`, `is_reversal`, `counterparty_mobile`,
`client_reference` (what Cauri sent: an operation's id). Cauri's amount is the movement before
Wave's fee (`amount + fee`: a checkout's gross amount, a payout's `receive_amount`), its fee
Wave's. A reversal gives money back: the operation it reverses did not happen after all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TextIO

from cauri.reconciliation.formats.reading import (
    minor_units,
    text_or_none,
    unreadable,
    utc_instant,
)
from cauri.reconciliation.lines import Line, LineKind, LineStatus, Reading

_KINDS = {
    "api_checkout": LineKind.COLLECT,
    "merchant_payment": LineKind.COLLECT,
    "api_checkout_refund": LineKind.REFUND,
    "merchant_payment_refund": LineKind.REFUND,
    "api_payout": LineKind.DISBURSE,
    "bulk_payment": LineKind.DISBURSE,
    "b2b_payment": LineKind.DISBURSE,
    "api_payout_reversal": LineKind.DISBURSE,
    "bulk_payment_reversal": LineKind.DISBURSE,
    "b2b_payment_reversal": LineKind.DISBURSE,
    "merchant_sweep": LineKind.SETTLEMENT,
}


@dataclass
class _Ends:
    """The wallet's balance before the first item and after the last, per currency."""

    first: dict[str, tuple[datetime, int]]
    last: dict[str, tuple[datetime, int]]


def read(text: TextIO) -> Reading:
    ends = _Ends({}, {})
    reading = Reading(iter(()))
    reading.lines = _lines(text, ends, reading)
    return reading


def _lines(text: TextIO, ends: _Ends, reading: Reading) -> Iterator[Line]:
    number = 0
    for page_number, page in enumerate(text, start=1):
        if not page.strip():
            continue
        try:
            items = json.loads(page)["items"]
        except (ValueError, KeyError, TypeError):
            raise unreadable(page_number, "page illisible (JSON avec `items` attendu).") from None
        for item in items:
            number += 1
            line, before, after = _line(item, number)
            _saw(ends, line, before, after)
            yield line
    reading.opening_balances = {currency: b for currency, (_, b) in ends.first.items()}
    reading.closing_balances = {currency: b for currency, (_, b) in ends.last.items()}


def _line(item: Any, number: int) -> tuple[Line, int, int]:
    if not isinstance(item, dict):
        raise unreadable(number, "élément illisible.")
    try:
        currency = str(item["currency"]).upper()
        delta = minor_units(item["amount"], currency, number)
        fee = abs(minor_units(item.get("fee") or 0, currency, number))
        after = minor_units(item["balance"], currency, number)
        transaction_id = text_or_none(item["transaction_id"], number, "transaction_id")
        at = utc_instant(str(item["timestamp"]), number)
    except KeyError as missing:
        raise unreadable(number, f"champ {missing} absent.") from None
    if transaction_id is None:
        raise unreadable(number, "transaction_id vide.")
    reversal = bool(item.get("is_reversal")) or str(item.get("transaction_type", "")).endswith(
        "_reversal"
    )
    line = Line(
        operator_id=transaction_id,
        reference=text_or_none(item.get("client_reference"), number, "client_reference"),
        kind=_KINDS.get(str(item.get("transaction_type") or ""), LineKind.OTHER),
        status=LineStatus.FAILED if reversal else LineStatus.SUCCEEDED,
        amount=delta + fee,
        fee=fee,
        currency=currency,
        phone_number=_digits(text_or_none(item.get("counterparty_mobile"), number, "mobile")),
        at=at,
    )
    return line, after - delta, after


def _digits(mobile: str | None) -> str | None:
    """Wave's numbers are E.164 with the `+`; Cauri's are digits with the country code."""
    return None if mobile is None else mobile.lstrip("+")


def _saw(ends: _Ends, line: Line, before: int, after: int) -> None:
    first = ends.first.get(line.currency)
    if first is None or line.at < first[0]:
        ends.first[line.currency] = (line.at, before)
    last = ends.last.get(line.currency)
    if last is None or line.at >= last[0]:
        ends.last[line.currency] = (line.at, after)
