"""Cauri's own statement CSV (format `cauri`), for the operators that publish no export format
of theirs (MTN MoMo, Orange Money, CinetPay): finance maps the operator's back-office export
to it, column by column (docs/OPERATORS.md, "Statements").

A header row names the columns, read by name in any order; other columns are ignored.
`operator_id` (the operator's id of the movement), `reference` (optional: what Cauri sent,
an operation's id), `kind` (collect, disburse, refund, fee, topup, settlement, other),
`status` (succeeded, failed, pending), `amount` (major units, a decimal string, signed: into
the wallet positive), `fee` (optional: major units, positive, what the operator took besides
`amount`), `currency`, `phone_number` (optional, digits with the country code), `at` (ISO 8601
with its offset). A row whose `kind` is `opening_balance` or `closing_balance` is no movement:
it gives the wallet's balance at the statement's start or end (`amount`, `currency`; the rest
is ignored), one of each per currency at most. Comma-separated, or semicolon-separated as a
French spreadsheet saves it: the header line says which.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from itertools import chain
from typing import TextIO, TypeVar

from cauri.kit.money import EXPONENT
from cauri.reconciliation.formats.reading import (
    minor_units,
    text_or_none,
    unreadable,
    utc_instant,
)
from cauri.reconciliation.lines import Line, LineKind, LineStatus, Reading

COLUMNS = ("operator_id", "kind", "status", "amount", "currency", "at")
OPENING, CLOSING = "opening_balance", "closing_balance"
# Which way a movement that happened moves the wallet; `other` may go either way.
_INTO_WALLET = frozenset({LineKind.COLLECT, LineKind.TOPUP})
_OUT_OF_WALLET = frozenset({LineKind.DISBURSE, LineKind.REFUND, LineKind.FEE, LineKind.SETTLEMENT})

Choice = TypeVar("Choice", LineKind, LineStatus)


def read(text: TextIO) -> Reading:
    header = text.readline()
    delimiter = ";" if header.count(";") > header.count(",") else ","
    rows = csv.DictReader(chain([header], text), delimiter=delimiter)
    rows.fieldnames = [name.strip() for name in rows.fieldnames or ()]
    missing = [name for name in COLUMNS if name not in rows.fieldnames]
    if missing:
        raise unreadable(1, f"colonnes absentes : {', '.join(missing)}.")
    reading = Reading(iter(()))
    reading.lines = _lines(rows, reading)
    return reading


def _lines(rows: csv.DictReader[str], reading: Reading) -> Iterator[Line]:
    for row in rows:
        number = rows.line_num  # the file's line, a quoted field's line breaks counted
        kind = _field(row, "kind").lower()
        if kind in (OPENING, CLOSING):
            held = reading.opening_balances if kind == OPENING else reading.closing_balances
            currency = _currency(row, number)
            if currency in held:
                raise unreadable(number, f"un deuxième {kind} en {currency}.", "kind")
            held[currency] = minor_units(_given(row, "amount", number), currency, number, "amount")
        else:
            yield _line(row, number)


def _line(row: Mapping[str, str | None], number: int) -> Line:
    kind = _choice(row, "kind", LineKind, number)
    status = _choice(row, "status", LineStatus, number)
    currency = _currency(row, number)
    amount_text = _given(row, "amount", number)
    amount = minor_units(amount_text, currency, number, "amount")
    if status is LineStatus.SUCCEEDED:
        _check_direction(kind, amount, amount_text, number)
    fee_text = _field(row, "fee")
    fee = minor_units(fee_text, currency, number, "fee") if fee_text else 0
    if fee < 0:
        raise unreadable(number, f"frais négatifs {fee_text!r} (positifs attendus).", "fee")
    return Line(
        operator_id=_operator_id(row, number),
        reference=text_or_none(_field(row, "reference"), number, "reference"),
        kind=kind,
        status=status,
        amount=amount,
        fee=fee,
        currency=currency,
        phone_number=_phone_number(row, number),
        at=utc_instant(_given(row, "at", number), number, "at", offset_required=True),
    )


def _field(row: Mapping[str, str | None], name: str) -> str:
    """A cell, trimmed; a row shorter than the header has empty cells."""
    return (row.get(name) or "").strip()


def _given(row: Mapping[str, str | None], name: str, number: int) -> str:
    value = _field(row, name)
    if not value:
        raise unreadable(number, "valeur absente.", name)
    return value


def _choice(row: Mapping[str, str | None], name: str, choices: type[Choice], number: int) -> Choice:
    value = _given(row, name, number).lower()
    try:
        return choices(value)
    except ValueError:
        known = ", ".join(choice.value for choice in choices)
        raise unreadable(number, f"{value!r} inconnu ({known}).", name) from None


def _currency(row: Mapping[str, str | None], number: int) -> str:
    currency = _given(row, "currency", number).upper()
    if currency not in EXPONENT:
        known = ", ".join(EXPONENT)
        raise unreadable(number, f"devise inconnue {currency!r} ({known}).", "currency")
    return currency


def _check_direction(kind: LineKind, amount: int, text: str, number: int) -> None:
    """A movement that happened moves the wallet its kind's way: an export's unsigned
    amounts mapped as they stand would read every payout as money in."""
    if kind in _INTO_WALLET and amount < 0:
        why = f"{text!r} : un {kind.value} réussi entre dans le portefeuille, positif attendu."
        raise unreadable(number, why, "amount")
    if kind in _OUT_OF_WALLET and amount > 0:
        why = f"{text!r} : un {kind.value} réussi sort du portefeuille, négatif attendu (-{text})."
        raise unreadable(number, why, "amount")


def _operator_id(row: Mapping[str, str | None], number: int) -> str:
    operator_id = text_or_none(_field(row, "operator_id"), number, "operator_id")
    if operator_id is None:
        raise unreadable(number, "valeur absente.", "operator_id")
    return operator_id


def _phone_number(row: Mapping[str, str | None], number: int) -> str | None:
    """Cauri's numbers are digits with the country code: `+229 97 12 34 56` is read so."""
    given = _field(row, "phone_number")
    digits = given.lstrip("+").replace(" ", "")
    if given and not (digits.isascii() and digits.isdigit()):
        raise unreadable(number, f"numéro illisible {given!r}.", "phone_number")
    return digits or None
