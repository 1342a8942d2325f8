"""French sentences, written for people, for what the validation library finds wrong with a
value: never its English text, never a regular expression. Programs branch on `code`; the
`details` messages are shown to the developer reading them, and often to their users
(`validation_error`: the refusal, each field named once). Free of the web framework, so
that what validates outside a request (forms, the command line) does not import it.

A string pattern is described by the meaning registered with it (`pattern`): a refused
e-mail address reads "Doit être une adresse e-mail valide.", not the pattern it failed."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Protocol, get_args

from pydantic_core.core_schema import ErrorType

from cauri.kit.errors import InvalidRequest

_BUILTIN_TYPES = frozenset(get_args(ErrorType))

_MEANINGS: dict[str, str] = {}


def pattern(regex: str, meaning: str) -> str:
    """`regex`, to give as a constraint's pattern; a value it refuses reads `meaning`."""
    _MEANINGS[regex] = meaning
    return regex


_FIXED = {
    "missing": "Champ obligatoire.",
    "extra_forbidden": "Champ inconnu.",
    "json_invalid": "Le corps de la requête n'est pas un JSON valide.",
    "json_type": "Doit être un texte JSON.",
    "string_type": "Doit être une chaîne de caractères.",
    "string_sub_type": "Doit être une chaîne de caractères.",
    "string_unicode": "Doit être une chaîne de caractères.",
    "string_pattern_mismatch": "Le format de la valeur n'est pas reconnu.",
    "int_type": "Doit être un nombre entier.",
    "int_parsing": "Doit être un nombre entier.",
    "int_from_float": "Doit être un nombre entier.",
    "int_parsing_size": "Doit être un nombre entier de taille raisonnable.",
    "float_type": "Doit être un nombre.",
    "float_parsing": "Doit être un nombre.",
    "decimal_type": "Doit être un nombre.",
    "decimal_parsing": "Doit être un nombre.",
    "finite_number": "Doit être un nombre fini.",
    "bool_type": "Doit être un booléen (true ou false).",
    "bool_parsing": "Doit être un booléen (true ou false).",
    "dict_type": "Doit être un objet JSON.",
    "model_type": "Doit être un objet JSON.",
    "model_attributes_type": "Doit être un objet JSON.",
    "dataclass_type": "Doit être un objet JSON.",
    "list_type": "Doit être une liste JSON.",
    "tuple_type": "Doit être une liste JSON.",
    "set_type": "Doit être une liste JSON.",
    "none_required": "Doit être null.",
    "uuid_type": "Doit être un identifiant UUID.",
    "uuid_parsing": "Doit être un identifiant UUID.",
    "url_type": "Doit être une adresse web valide.",
    "url_parsing": "Doit être une adresse web valide.",
    "url_syntax_violation": "Doit être une adresse web valide.",
    "url_scheme": "Doit être une adresse web commençant par http:// ou https://.",
    "url_too_long": "L'adresse web est trop longue.",
    "date_type": "Doit être une date ISO 8601 (2026-01-31).",
    "date_parsing": "Doit être une date ISO 8601 (2026-01-31).",
    "date_from_datetime_parsing": "Doit être une date ISO 8601 (2026-01-31).",
    "datetime_type": "Doit être un horodatage ISO 8601 (2026-01-31T12:00:00Z).",
    "datetime_parsing": "Doit être un horodatage ISO 8601 (2026-01-31T12:00:00Z).",
    "datetime_from_date_parsing": "Doit être un horodatage ISO 8601 (2026-01-31T12:00:00Z).",
}

# Messages that say a bound, read from the error's `ctx`.
_BOUNDED = {
    "greater_than": ("gt", "Doit être supérieur à {}."),
    "greater_than_equal": ("ge", "Doit être supérieur ou égal à {}."),
    "less_than": ("lt", "Doit être inférieur à {}."),
    "less_than_equal": ("le", "Doit être inférieur ou égal à {}."),
    "multiple_of": ("multiple_of", "Doit être un multiple de {}."),
    "string_too_long": ("max_length", "Ne doit pas dépasser {} caractères."),
    "too_short": ("min_length", "Doit compter au moins {} élément(s)."),
    "too_long": ("max_length", "Ne doit pas compter plus de {} éléments."),
    "decimal_max_digits": ("max_digits", "Ne doit pas compter plus de {} chiffres."),
    "decimal_max_places": ("decimal_places", "Ne doit pas compter plus de {} décimale(s)."),
    "decimal_whole_digits": ("whole_digits", "Ne doit pas compter plus de {} chiffres entiers."),
}

_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _number(value: Any) -> str:
    if isinstance(value, Decimal | float):
        return format(Decimal(str(value)).normalize(), "f")
    return str(value)


def _choices(expected: str) -> str:
    """Pydantic's "'a', 'b' or 'c'" as a sentence."""
    values = _QUOTED.findall(expected) or re.split(r", | or ", expected)
    quoted = [f"« {value} »" for value in values]
    if len(quoted) == 1:
        return f"Doit valoir {quoted[0]}."
    return f"Doit être l'une de ces valeurs : {', '.join(quoted[:-1])} ou {quoted[-1]}."


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return "Valeur invalide."
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def french(error: Mapping[str, Any]) -> str:
    """The sentence for one error of a Pydantic validation (`ValidationError.errors()`)."""
    kind: str = error.get("type", "")
    ctx: dict[str, Any] = error.get("ctx") or {}
    if kind == "string_too_short":
        least = ctx.get("min_length", 1)
        return (
            "Ne doit pas être vide." if least == 1 else f"Doit compter au moins {least} caractères."
        )
    if kind == "string_pattern_mismatch" and ctx.get("pattern") in _MEANINGS:
        return _MEANINGS[ctx["pattern"]]
    if kind in {"literal_error", "enum"} and "expected" in ctx:
        return _choices(str(ctx["expected"]))
    if kind in _BOUNDED:
        key, template = _BOUNDED[kind]
        return template.format(_number(ctx.get(key, "")))
    if kind in _FIXED:
        return _FIXED[kind]
    if kind in {"value_error", "assertion_error"} and "error" in ctx:
        # Raised by this service's own validators, in French.
        return _sentence(str(ctx["error"]))
    if kind not in _BUILTIN_TYPES:
        return _sentence(str(error.get("msg", "")))  # a PydanticCustomError of this service
    return "Valeur invalide."


_SOURCES = {"body", "query", "path", "header"}


def _field_name(loc: tuple[Any, ...]) -> str:
    parts = [str(part) for part in loc if not isinstance(part, int)]
    if parts and parts[0] in _SOURCES:
        parts = parts[1:]
    return ".".join(parts) or "body"


def _message(error: Mapping[str, Any]) -> str:
    kind = error.get("type", "")
    if kind in {"model_attributes_type", "dict_type"} and not error.get("loc", ())[1:]:
        return "Le corps de la requête doit être un objet JSON."
    return french(error)


class _Invalid(Protocol):
    """What the validation library and the web framework raise on invalid input."""

    def errors(self) -> Sequence[Any]: ...


def validation_error(exc: _Invalid) -> InvalidRequest:
    """The spec's `invalid_request`, each refused field named with its French sentences."""
    details: dict[str, list[str]] = {}
    for error in exc.errors():
        details.setdefault(_field_name(tuple(error.get("loc", ()))), []).append(_message(error))
    return InvalidRequest("La requête est invalide.", details)
