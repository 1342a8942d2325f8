"""The merchant's free `metadata` object (payments, instalments, payouts): stored as sent,
within bounds, so that one row cannot grow without end (DESIGN: serialized ≤ 8 KiB, 50 keys)."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

MAX_METADATA_BYTES = 8 * 1024
MAX_METADATA_KEYS = 50


def _as_json(value: Any) -> Any:
    """The values json.dumps and JSONB take: the strict reader's Decimals become floats, as a
    plain JSON reader would have read them (metadata is not money)."""
    if isinstance(value, Decimal):
        number = float(value)
        if not math.isfinite(number):
            raise PydanticCustomError(
                "metadata_number", "Un nombre des métadonnées est trop grand."
            )
        return number
    if isinstance(value, dict):
        return {key: _as_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_json(item) for item in value]
    return value


def _bounded(value: dict[str, Any]) -> dict[str, Any]:
    if len(value) > MAX_METADATA_KEYS:
        raise PydanticCustomError(
            "metadata_keys",
            "Les métadonnées ont plus de {limit} clés.",
            {"limit": MAX_METADATA_KEYS},
        )
    stored: dict[str, Any] = _as_json(value)
    size = len(json.dumps(stored, ensure_ascii=False, separators=(",", ":")).encode())
    if size > MAX_METADATA_BYTES:
        raise PydanticCustomError(
            "metadata_size",
            "Les métadonnées dépassent {limit} octets une fois sérialisées.",
            {"limit": MAX_METADATA_BYTES},
        )
    return stored


Metadata = Annotated[
    dict[str, Any],
    AfterValidator(_bounded),
    Field(json_schema_extra={"maxProperties": MAX_METADATA_KEYS}),
]
