"""Staff passwords: Argon2id (argon2-cffi's defaults, the RFC 9106 recommendation), verified
off the event loop (a hash takes tens of milliseconds and 64 MiB), rehashed at the next
sign-in when the parameters change."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from cauri.kit.errors import InvalidRequest

MIN_LENGTH = 12
MAX_LENGTH = 256

_hasher = PasswordHasher()
# Checked when the email matches no account, so that an unknown address costs the same time
# as a wrong password and the answer's delay does not tell which addresses exist.
_DECOY = _hasher.hash("no account has this password")


@dataclass(frozen=True)
class Verdict:
    valid: bool
    # The new hash to store: the parameters changed since this one was made.
    rehashed: str | None = None


def check_new(password: str, confirmation: str | None = None) -> None:
    """Refuses a password too short or too long, or that differs from its confirmation."""
    if not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        raise InvalidRequest.field(
            "password",
            f"Le mot de passe doit compter de {MIN_LENGTH} à {MAX_LENGTH} caractères.",
        )
    if confirmation is not None and confirmation != password:
        raise InvalidRequest.field("confirmation", "Les deux mots de passe diffèrent.")


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(_hasher.hash, password)


def _verify(stored: str | None, password: str) -> Verdict:
    try:
        _hasher.verify(stored or _DECOY, password)
    except (VerificationError, InvalidHashError):
        return Verdict(False)
    if stored is None:
        return Verdict(False)
    return Verdict(True, _hasher.hash(password) if _hasher.check_needs_rehash(stored) else None)


async def verify(stored: str | None, password: str) -> Verdict:
    """Whether `password` matches `stored` (None: an account without a password, or none)."""
    return await asyncio.to_thread(_verify, stored, password)
