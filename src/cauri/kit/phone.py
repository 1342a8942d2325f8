"""Phone numbers (spec: Operators rule 3): 8 to 15 digits with the country code, optional `+`."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import StringConstraints, WithJsonSchema

from cauri.kit.errors import InvalidRequest

SHAPE = r"^\+?[0-9]{8,15}$"
_SHAPE = re.compile(SHAPE)

# A number as a request gives it. `normalize` checks its shape (with a French message) once
# the operator, and so the country, is known; the document shows the shape as a pattern.
PhoneNumber = Annotated[
    str,
    StringConstraints(max_length=32),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": SHAPE,
            "description": "8 to 15 digits, the country code first (229 BJ, 226 BF, 225 CI, "
            "223 ML, 221 SN, 228 TG, 242 CG); a leading + is tolerated.",
            "examples": ["22997000000"],
        }
    ),
]

DIAL_CODES: dict[str, str] = {
    "BJ": "229",
    "BF": "226",
    "CI": "225",
    "ML": "223",
    "SN": "221",
    "TG": "228",
    "CG": "242",
}


def normalize(raw: str, country_code: str | None, field: str = "phone_number") -> str:
    """Digits only, country code checked against the operator's country."""
    if not _SHAPE.fullmatch(raw):
        raise InvalidRequest.field(
            field,
            "Le numéro doit compter 8 à 15 chiffres, indicatif pays compris, "
            "sans espaces, tirets ni parenthèses.",
        )
    digits = raw.removeprefix("+")
    if country_code is not None and not digits.startswith(DIAL_CODES[country_code]):
        raise InvalidRequest.field(
            field,
            f"Le numéro doit commencer par l'indicatif {DIAL_CODES[country_code]} "
            f"({country_code}) de l'opérateur.",
        )
    return digits


def mask(digits: str) -> str:
    """Keeps the leading digits, replaces the last four by asterisks (spec: Payout)."""
    keep = max(len(digits) - 4, 0)
    return digits[:keep] + "*" * (len(digits) - keep)
