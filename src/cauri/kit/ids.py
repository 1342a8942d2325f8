"""Identifiers shown to merchants."""

from __future__ import annotations

import secrets
import string
import uuid

_ALPHABET = string.ascii_uppercase + string.digits


def new_uuid() -> uuid.UUID:
    return uuid.uuid4()


def prefixed(prefix: str, nbytes: int = 12) -> str:
    return f"{prefix}_{secrets.token_hex(nbytes)}"


def short_identifier(prefix: str = "CAU") -> str:
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(12))


def random_secret(length: int) -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))


def parse_uuid(reference: str) -> uuid.UUID | None:
    """The UUID a reference spells, if it spells one (a reference may be an external_id)."""
    try:
        return uuid.UUID(reference)
    except ValueError:
        return None
