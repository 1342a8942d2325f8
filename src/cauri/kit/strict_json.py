"""The one reader of JSON request bodies: what it returns is exactly what the client wrote.

- Numbers with a fraction or an exponent are `Decimal`s, never floats (invariant 1: an amount
  of `1000.00000000000001` XOF is refused, not rounded to 1000); `NaN` and `Infinity` are no
  JSON at all.
- A key repeated in an object is refused: a proxy keeping the first and this service the last
  would each see another request.
- No string holds a NUL or a lone surrogate (PostgreSQL cannot store either), and nesting is
  bounded, so that nothing of the body can break a query or a serializer later on.
Every refusal is a 422 `invalid_request` naming the field in dotted notation.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from cauri.kit.errors import InvalidRequest

MAX_DEPTH = 32

# NUL, and the surrogates that no UTF-8 text can carry.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class _Pairs(list[tuple[str, Any]]):
    """An object as written, keys in order and repeats kept, until `_checked` judges it."""


def unstorable(text: str) -> bool:
    """Whether `text` holds a character that PostgreSQL refuses in a text value."""
    return _UNSTORABLE.search(text) is not None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} n'est pas une valeur JSON.")


def loads(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _refusal("body", "Le corps de la requête n'est pas encodé en UTF-8.") from None
    try:
        parsed = json.loads(
            text, parse_float=Decimal, parse_constant=_no_constant, object_pairs_hook=_Pairs
        )
    except (ValueError, RecursionError):
        # ValueError covers the syntax errors, the constants above and the integers too long
        # for Python to convert.
        raise _refusal("body", "Le corps de la requête n'est pas un JSON valide.") from None
    return _checked(parsed, (), 0)


def _checked(value: Any, path: tuple[str, ...], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise _refusal(_name(path), f"Le JSON est imbriqué sur plus de {MAX_DEPTH} niveaux.")
    if isinstance(value, str):
        if unstorable(value):
            raise _refusal(_name(path), "Le texte contient un caractère interdit (NUL).")
        return value
    if isinstance(value, _Pairs):
        result: dict[str, Any] = {}
        for key, item in value:
            if unstorable(key):
                raise _refusal(_name(path), "Un nom de champ contient un caractère interdit.")
            inner = (*path, key)
            if key in result:
                raise _refusal(_name(inner), "Ce champ apparaît plusieurs fois dans l'objet.")
            result[key] = _checked(item, inner, depth + 1)
        return result
    if isinstance(value, list):
        return [_checked(item, path, depth + 1) for item in value]
    return value


def _name(path: tuple[str, ...]) -> str:
    return ".".join(path) or "body"


def _refusal(field: str, message: str) -> InvalidRequest:
    return InvalidRequest("La requête est invalide.", {field: [message]})
