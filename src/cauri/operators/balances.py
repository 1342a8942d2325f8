"""What an operator says a wallet holds (GivesBalances), read exactly: its amount in major
units, as a decimal string or a JSON number, into minor units of its currency, never through a
float; anything else is no balance at all (StatementUnavailable)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from cauri.kit.errors import InvalidRequest
from cauri.kit.money import EXPONENT, to_minor
from cauri.operators.protocol import StatementUnavailable


def parsed(text: str | None) -> Any:
    """An answer's JSON body with its numbers as Decimals (`663.5` stays exact); None when
    there is none or it is not JSON."""
    if not text:
        return None
    try:
        return json.loads(text, parse_float=Decimal)
    except ValueError:
        return None


def minor_units(amount: Any, currency: Any, whose: str) -> tuple[str, int]:
    """`("1000.50", "EUR")` → `("EUR", 100050)`; `whose` names the balance in the refusal."""
    code = currency.strip().upper() if isinstance(currency, str) else None
    if code not in EXPONENT:
        raise StatementUnavailable(f"{whose}: currency {currency!r} unknown")
    if isinstance(amount, bool) or not isinstance(amount, str | int | Decimal):
        raise StatementUnavailable(f"{whose}: amount {amount!r} unreadable")
    try:
        value = Decimal(amount.strip() if isinstance(amount, str) else amount)
        if not value.is_finite():
            raise InvalidOperation
        return code, to_minor(value, code)
    except (InvalidOperation, InvalidRequest):
        raise StatementUnavailable(f"{whose}: amount {amount!r} unreadable in {code}") from None


def summed(balances: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Several wallets' balances (one per country, per product), one total per currency."""
    totals: dict[str, int] = {}
    for currency, minor in balances:
        totals[currency] = totals.get(currency, 0) + minor
    return totals
