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
    return prefix + random_text(_ALPHABET, 12)


def random_secret(length: int) -> str:
    return random_text(string.ascii_letters + string.digits, length)


def random_text(alphabet: str, length: int) -> str:
    """`length` characters of `alphabet`, each uniform and independent, from one read of the
    system's randomness (`secrets.choice` reads it once per character: a payment's
    identifier was 12 system calls). A byte is kept only below the largest multiple of the
    alphabet's size, so that no character is likelier than another."""
    assert 0 < len(alphabet) <= 256, "one byte draws one character"
    bound = 256 - 256 % len(alphabet)
    drawn: list[str] = []
    while len(drawn) < length:
        drawn.extend(
            alphabet[b % len(alphabet)] for b in secrets.token_bytes(length + 8) if b < bound
        )
    return "".join(drawn[:length])


def parse_uuid(reference: str) -> uuid.UUID | None:
    """The UUID a reference spells, if it spells one (a reference may be an external_id)."""
    try:
        return uuid.UUID(reference)
    except ValueError:
        return None
