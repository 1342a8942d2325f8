"""pawaPay's wallet statement, as its dashboard exports it and `POST /v2/statements` builds
it: a CSV, one line per movement of one wallet (docs/OPERATORS.md, "Statements").

Documented columns, read by name (their order and any later column are not relied on):
`Creation Date` (UTC), `MSISDN`, `Transaction ID` (the depositId, payoutId or refundId Cauri
chose: an operation's id), `Amount`, `Currency`, `Country`, `MNO`, `Type`. pawaPay does not
document the values of `Type` on the pages we could read: it is matched by the wallet's
documented categories (deposits, payouts, remittances, refunds, fees, top ups, withdrawals),
anything else is `other`; the amount's sign follows the kind, since the documentation does
not say how a debit is written. A statement lists the wallet's movements: each line is a
movement that happened (`succeeded`). Fetched, it is one file per wallet, one after the
other: a header row again starts the next. It gives no fee per line: pawaPay's fees are their own
category, so their own lines.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import TextIO

from cauri.reconciliation.formats.reading import (
    minor_units,
    text_or_none,
    unreadable,
    utc_instant,
)
from cauri.reconciliation.lines import Line, LineKind, LineStatus, Reading

COLUMNS = ("Creation Date", "MSISDN", "Transaction ID", "Amount", "Currency", "Type")

# By what the type's name contains, first match wins (a "Deposit refund" is a refund).
_KINDS = (
    ("refund", LineKind.REFUND),
    ("fee", LineKind.FEE),
    ("deposit", LineKind.COLLECT),
    ("payout", LineKind.DISBURSE),
    ("remittance", LineKind.DISBURSE),
    ("top up", LineKind.TOPUP),
    ("top-up", LineKind.TOPUP),
    ("topup", LineKind.TOPUP),
    ("withdrawal", LineKind.SETTLEMENT),
    ("settlement", LineKind.SETTLEMENT),
)
_INTO_WALLET = (LineKind.COLLECT, LineKind.TOPUP)


def kind_of(type_name: str) -> LineKind:
    lowered = type_name.strip().lower()
    return next((kind for word, kind in _KINDS if word in lowered), LineKind.OTHER)


def read(text: TextIO) -> Reading:
    rows = csv.DictReader(text)
    missing = [name for name in COLUMNS if name not in (rows.fieldnames or ())]
    if missing:
        raise unreadable(1, f"colonnes absentes : {', '.join(missing)}.")
    return Reading(_lines(rows))


def _lines(rows: csv.DictReader[str]) -> Iterator[Line]:
    for number, row in enumerate(rows, start=2):
        if row["Transaction ID"] == "Transaction ID":
            continue  # the next wallet's statement, fetched after this one
        currency = (row["Currency"] or "").strip().upper()
        kind = kind_of(row["Type"] or "")
        amount = minor_units(row["Amount"], currency, number)
        if kind is not LineKind.OTHER:
            amount = abs(amount) if kind in _INTO_WALLET else -abs(amount)
        transaction_id = text_or_none((row["Transaction ID"] or "").strip(), number, "ID")
        if transaction_id is None:
            raise unreadable(number, "Transaction ID vide.")
        yield Line(
            operator_id=transaction_id,
            reference=transaction_id,
            kind=kind,
            status=LineStatus.SUCCEEDED,
            amount=amount,
            fee=0,
            currency=currency,
            phone_number=text_or_none((row["MSISDN"] or "").strip(), number, "MSISDN"),
            at=utc_instant(row["Creation Date"] or "", number),
        )
