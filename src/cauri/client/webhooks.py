"""Webhook signatures (spec: Signature verification), for merchants' receivers.

`X-Service-Signature: t=<unix timestamp>,v1=<hex HMAC-SHA256 of "<t>." + raw body>`, keyed
with the secret of the emitting environment. The service signs with `signature_header`
below, so sender and receiver share one definition of the scheme.

    from cauri.client.webhooks import verify, WebhookVerificationError

    try:
        event = verify(request_body_bytes, headers["X-Service-Signature"], secret)
    except WebhookVerificationError:
        return 400
    # deduplicate on event["id"]: a notification can arrive more than once
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

DEFAULT_TOLERANCE = 300
SCHEME = "v1"


class WebhookVerificationError(Exception):
    """The notification cannot be trusted; answer it with an error and do not act on it."""


class MalformedHeader(WebhookVerificationError):
    """The signature header is absent or not `t=<integer>,v1=<hex>`."""


class InvalidSignature(WebhookVerificationError):
    """No v1 signature matches the body with this secret."""


class StaleTimestamp(WebhookVerificationError):
    """The signature's timestamp is further from now than the tolerance (a replay?)."""


class MalformedPayload(WebhookVerificationError):
    """The signed body is not a JSON object."""


def compute_signature(payload: bytes, secret: str, timestamp: int) -> str:
    signed = str(timestamp).encode() + b"." + payload
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signature_header(payload: bytes, secret: str, timestamp: int) -> str:
    return f"t={timestamp},{SCHEME}={compute_signature(payload, secret, timestamp)}"


def _parse(header: str) -> tuple[int, list[str]]:
    """The timestamp and every v1 signature (several may be sent while a secret changes)."""
    timestamp: int | None = None
    signatures: list[str] = []
    for item in header.split(","):
        key, sep, value = item.strip().partition("=")
        if not sep:
            raise MalformedHeader(f"Élément sans '=' dans l'en-tête de signature : {item!r}.")
        if key == "t":
            try:
                timestamp = int(value)
            except ValueError:
                raise MalformedHeader("L'horodatage t n'est pas un entier.") from None
        elif key == SCHEME:
            signatures.append(value)
    if timestamp is None:
        raise MalformedHeader("L'en-tête de signature n'a pas d'horodatage t.")
    if not signatures:
        raise MalformedHeader("L'en-tête de signature n'a pas de signature v1.")
    return timestamp, signatures


def verify(
    raw_body: bytes | str,
    signature_header: str,
    secret: str,
    tolerance: int = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> dict[str, Any]:
    """Checks the signature of a notification and returns the parsed event.

    `raw_body` must be the bytes exactly as received, before any JSON parsing. Raises a
    `WebhookVerificationError` subclass when the notification must be rejected.
    """
    payload = raw_body.encode() if isinstance(raw_body, str) else raw_body
    if not signature_header:
        raise MalformedHeader("L'en-tête de signature est absent.")
    timestamp, signatures = _parse(signature_header)
    expected = compute_signature(payload, secret, timestamp)
    # Constant-time comparison: no timing hint on how much of a forged signature matched.
    if not any(hmac.compare_digest(expected, candidate) for candidate in signatures):
        raise InvalidSignature("Aucune signature ne correspond au corps avec ce secret.")
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise StaleTimestamp(
            f"Signature datée de {int(abs(current - timestamp))} s, au-delà de {tolerance} s."
        )
    try:
        event = json.loads(payload)
    except ValueError:
        raise MalformedPayload("Le corps signé n'est pas du JSON.") from None
    if not isinstance(event, dict):
        raise MalformedPayload("Le corps signé n'est pas un objet JSON.")
    return event
