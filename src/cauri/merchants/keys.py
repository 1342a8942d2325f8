"""Secret API keys: high entropy, shown once, stored as a SHA-256 digest.

A key of 32 random bytes cannot be guessed, so a fast digest is enough (no salt or slow
hash needed) and lets authentication look a key up by its digest in one indexed query.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

TEST_PREFIX = "sk_test_"
LIVE_PREFIX = "sk_live_"


def generate(livemode: bool) -> str:
    return (LIVE_PREFIX if livemode else TEST_PREFIX) + secrets.token_urlsafe(32)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def livemode_of(key: str) -> bool | None:
    """True for a live key, False for a test key, None for anything else."""
    if key.startswith(TEST_PREFIX):
        return False
    if key.startswith(LIVE_PREFIX):
        return True
    return None


# The grace periods offered when keys are rotated: how long the keys replaced keep working.
GRACES = {
    "0": ("aucun délai", timedelta(0)),
    "1h": ("1 heure", timedelta(hours=1)),
    "24h": ("24 heures", timedelta(hours=24)),
    "7d": ("7 jours", timedelta(days=7)),
}
