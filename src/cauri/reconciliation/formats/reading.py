"""What every statement format reads the same way: amounts in major units, instants, and
the refusal that names the line it could not read."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation

from cauri.kit.errors import InvalidRequest
from cauri.kit.money import EXPONENT


def unreadable(line: int, why: str, column: str | None = None) -> InvalidRequest:
    where = f"ligne {line}" if column is None else f"ligne {line}, colonne {column}"
    return InvalidRequest(f"Relevé illisible, {where} : {why}")


def minor_units(text: object, currency: str, line: int, column: str | None = None) -> int:
    """`"1000"`, `"-12.50"`, `1000` (a number) in `currency`'s minor units."""
    if currency not in EXPONENT:
        raise unreadable(line, f"devise inconnue {currency!r}.")
    try:
        scaled = Decimal(str(text).strip()).scaleb(EXPONENT[currency])
    except InvalidOperation:
        raise unreadable(line, f"montant illisible {text!r}.", column) from None
    if not scaled.is_finite() or scaled != scaled.to_integral_value():
        raise unreadable(line, f"montant {text!r} impossible en {currency}.", column)
    return int(scaled)


def utc_instant(
    text: str, line: int, column: str | None = None, *, offset_required: bool = False
) -> datetime:
    """ISO 8601, with `T` or a space; an instant without an offset is UTC (as the operators
    that document theirs state), unless the format requires one."""
    try:
        instant = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise unreadable(line, f"date illisible {text!r}.", column) from None
    if instant.tzinfo is None and offset_required:
        raise unreadable(line, f"date sans décalage horaire {text!r} (…Z, …+00:00).", column)
    return instant.replace(tzinfo=UTC) if instant.tzinfo is None else instant.astimezone(UTC)


def text_or_none(value: object, line: int, name: str) -> str | None:
    """An optional text field: a string without NUL (PostgreSQL's text refuses it), or none."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or "\x00" in value:
        raise unreadable(line, f"champ {name} illisible.")
    return value
