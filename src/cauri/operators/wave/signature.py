"""Wave's webhook authentication. Its signature:
`Wave-Signature: t=<unix time>,v1=<hex>[,v1=<hex>…]`, each `v1` an HMAC-SHA256 with the
webhook secret over the timestamp followed by the raw body. Any matching `v1` is accepted
(Wave sends one per secret while a secret is rotated); a timestamp too far from now is
refused, so a captured event cannot be replayed later. Sources in docs/OPERATORS.md, "Wave".
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

TOLERANCE_SECONDS = 300


def authentic(headers: Mapping[str, str], body: bytes, secret: str, now: float) -> bool:
    """A webhook set to sign its events carries `Wave-Signature`; one set to Wave's other
    method, the shared secret, carries it as a bearer token."""
    if "wave-signature" in headers:
        return valid(headers["wave-signature"], body, secret, now)
    bearer = headers.get("authorization", "")
    scheme, _, token = bearer.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.encode(), secret.encode())


def valid(header: str | None, body: bytes, secret: str, now: float) -> bool:
    if not header:
        return False
    timestamp: str | None = None
    candidates: list[str] = []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t":
            timestamp = value
        elif name == "v1":
            candidates.append(value)
    # Headers arrive as Latin-1 text: anything but ASCII digits and hex is simply wrong.
    if timestamp is None or not (timestamp.isascii() and timestamp.isdigit()) or not candidates:
        return False
    if abs(now - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    expected = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected.encode(), c.encode()) for c in candidates)
