"""The signature of a notification (spec: Headers sent, Signature verification).

`X-Service-Signature: t=<unix timestamp>,v1=<hex HMAC-SHA256 of "<t>." + raw body>`, keyed
with the secret of the emitting environment. Merchants verify it with the client package
(`cauri_client.webhooks.verify`), which the server does not depend on.
"""

from __future__ import annotations

import hashlib
import hmac

SCHEME = "v1"


def compute_signature(payload: bytes, secret: str, timestamp: int) -> str:
    signed = str(timestamp).encode() + b"." + payload
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signature_header(payload: bytes, secret: str, timestamp: int) -> str:
    return f"t={timestamp},{SCHEME}={compute_signature(payload, secret, timestamp)}"
