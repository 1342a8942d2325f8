"""Money as integer minor units plus a currency (invariant 1). The API speaks major units."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from enum import StrEnum
from typing import Annotated

from pydantic import BeforeValidator, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from cauri.kit.errors import InvalidRequest


class Currency(StrEnum):
    XOF = "XOF"
    XAF = "XAF"
    EUR = "EUR"
    USD = "USD"


EXPONENT: dict[str, int] = {"XOF": 0, "XAF": 0, "EUR": 2, "USD": 2}


def _json_number(value: object) -> object:
    # The strict JSON reader gives ints and Decimals for numbers; a quoted amount or a
    # boolean is another type, and converting it would hide a client's mistake.
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise PydanticCustomError("json_number", "Le montant doit être un nombre JSON.")
    return value


JsonNumber = BeforeValidator(_json_number)

# An amount in major units (payments, instalments, payouts), exactly as the JSON text spells it.
Amount = Annotated[
    Decimal,
    JsonNumber,
    Field(gt=0, max_digits=15),
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0}),
]


def to_minor(amount: Decimal | int, currency: str, field: str = "amount") -> int:
    """Major units from the API to minor units; more decimals than the currency has is a 422."""
    try:
        scaled = Decimal(amount).scaleb(EXPONENT[currency])
    except InvalidOperation as exc:  # pragma: no cover - pydantic already parsed a number
        raise InvalidRequest.field(field, "Le montant n'est pas un nombre.") from exc
    if scaled != scaled.to_integral_value():
        places = EXPONENT[currency]
        raise InvalidRequest.field(
            field, f"Le montant a plus de {places} décimale(s), ce que {currency} n'admet pas."
        )
    return int(scaled)


def to_major(minor: int, currency: str) -> int | float:
    """Minor units to the number shown in responses: an integer whenever it is whole."""
    unit: int = 10 ** EXPONENT[currency]
    if minor % unit == 0:
        return minor // unit
    return minor / unit


def decimal_text(minor: int, currency: str) -> str:
    """Minor units as the decimal string operators' APIs take: 5000 XOF is "5000", 1234 EUR
    cents "12.34"."""
    return format(Decimal(minor).scaleb(-EXPONENT[currency]), "f")


def percent_of(minor: int, percent: Decimal) -> int:
    """`percent` % of an amount, rounded half up to the currency's unit (DESIGN: fees)."""
    return int((Decimal(minor) * percent / 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def fee_for(minor: int, percent: Decimal, fixed_minor: int) -> int:
    return percent_of(minor, percent) + fixed_minor


# The currencies fixed fees are set in (DESIGN: fixed fees). XAF shares XOF's amounts at par:
# both francs are pegged to the euro at the same rate and have no decimals. EUR and USD have
# their own, 0 unless set.
FIXED_FEE_CURRENCIES = ("XOF", "EUR", "USD")


def fixed_fee_currency(currency: str) -> str:
    """The currency whose fixed fee applies to an amount in `currency`."""
    return "XOF" if currency == "XAF" else currency


def format_major(minor: int, currency: str) -> str:
    return f"{to_major(minor, currency)} {currency}"


NARROW_NBSP = "\u202f"


def format_amount(minor: int, currency: str) -> str:
    """French notation: `1 234 567 XOF`, `12,50 EUR` (narrow no-break space between groups)."""
    places = EXPONENT[currency]
    units, cents = divmod(minor, 10**places)
    text = f"{units:,}".replace(",", NARROW_NBSP)
    if places:
        text += f",{cents:0{places}d}"
    return f"{text}\u00a0{currency}"
