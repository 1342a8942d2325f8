"""Comparing a token a client sent with the one expected."""

from __future__ import annotations

import hmac


def same(sent: str | None, expected: str) -> bool:
    """Compares a token in constant time; any text may be sent."""
    if not sent:
        return False
    return hmac.compare_digest(sent.encode(errors="replace"), expected.encode())
