"""The random tokens of sessions and one-time links: 32 random bytes, of which only a
SHA-256 digest is stored (a token this long needs no salt nor slow hash, and is looked up by
its digest in one indexed query)."""

from __future__ import annotations

import hashlib
import secrets


def new_token() -> str:
    return secrets.token_urlsafe(32)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
