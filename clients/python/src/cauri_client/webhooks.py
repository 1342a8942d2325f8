"""Webhook notifications: checking their signature and reading their event (spec: Events,
Signature verification).

`X-Service-Signature: t=<unix timestamp>,v1=<hex HMAC-SHA256 of "<t>." + raw body>`, keyed
with the endpoint secret of the emitting environment (`cauri.webhooks.get_endpoint()`).

    from cauri_client.webhooks import verify, WebhookVerificationError

    try:
        event = verify(request_body_bytes, headers["X-Service-Signature"], secret)
    except WebhookVerificationError:
        return 400
    # deduplicate on event.id: a notification can arrive more than once
    if event.event == "payment.succeeded": ...
    # an event this code does not know: answer 2xx and ignore it
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time

from cauri_client.resources import Event

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


def signature(payload: bytes, secret: str, timestamp: int) -> str:
    """The v1 signature of `payload` sent at `timestamp` (hex HMAC-SHA256)."""
    signed = str(timestamp).encode() + b"." + payload
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signature_header(payload: bytes, secret: str, timestamp: int) -> str:
    """`X-Service-Signature` as Cauri sends it: what `cauri-client listen` signs with, so
    that a receiver verifies a forwarded event as it would a delivery."""
    return f"t={timestamp},{SCHEME}={signature(payload, secret, timestamp)}"


# Bounds that no genuine header comes near: past them, parsing could only be made to work hard
# (a timestamp of thousands of digits, thousands of signatures) or to overflow.
_MAX_HEADER = 4096
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"[0-9a-f]{64}")


def _parse(header: object) -> tuple[int, list[str]]:
    """The timestamp and every v1 signature (several may be sent while a secret changes).

    Anything but the exact ASCII shape `t=<digits>,v1=<64 hex>[,v1=...]` (other schemes
    ignored) is a `MalformedHeader`, whatever its type: the header comes from the network."""
    if header is None:
        raise MalformedHeader("L'en-tête de signature est absent.")
    if not isinstance(header, str):
        raise MalformedHeader(
            f"L'en-tête de signature doit être une chaîne (str), pas {type(header).__name__}."
        )
    if not header:
        raise MalformedHeader("L'en-tête de signature est vide.")
    if len(header) > _MAX_HEADER or not header.isascii():
        raise MalformedHeader("L'en-tête de signature est trop long ou n'est pas en ASCII.")
    timestamp: int | None = None
    signatures: list[str] = []
    for item in header.split(","):
        key, sep, value = item.strip().partition("=")
        if not sep:
            raise MalformedHeader(f"Élément sans '=' dans l'en-tête de signature : {item!r}.")
        if key == "t":
            if timestamp is not None:
                raise MalformedHeader("L'horodatage t apparaît plusieurs fois.")
            if not _TIMESTAMP.fullmatch(value):
                raise MalformedHeader("L'horodatage t n'est pas un entier positif.")
            timestamp = int(value)
        elif key == SCHEME:
            if not _SIGNATURE.fullmatch(value):
                raise MalformedHeader("Une signature v1 n'est pas un HMAC-SHA256 hexadécimal.")
            signatures.append(value)
    if timestamp is None:
        raise MalformedHeader("L'en-tête de signature n'a pas d'horodatage t.")
    if not signatures:
        raise MalformedHeader("L'en-tête de signature n'a pas de signature v1.")
    return timestamp, signatures


def _payload(raw_body: object) -> bytes:
    if isinstance(raw_body, bytes | bytearray | memoryview):
        return bytes(raw_body)
    if isinstance(raw_body, str):
        try:
            # Gives back the bytes of a body decoded with errors="surrogateescape".
            return raw_body.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raise MalformedPayload("Le corps reçu n'est pas un texte encodable.") from None
    raise TypeError(
        "raw_body doit être le corps brut reçu (bytes ou str), avant tout décodage JSON ; "
        f"reçu : {type(raw_body).__name__}."
    )


def verify(
    raw_body: bytes | str,
    signature_header: str | None,
    secret: str,
    tolerance: int = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> Event:
    """Checks the signature of a notification and returns its event.

    `raw_body` must be the bytes exactly as received, before any JSON parsing. Raises a
    `WebhookVerificationError` subclass when the notification must be rejected, whatever
    the header holds (absent, not a str, not ASCII, malformed).

    Raises `TypeError` when `raw_body` is not bytes or str or `secret` is not a str, and
    `ValueError` when `secret` is empty: these are bugs of the calling code, not bad
    notifications, and must not pass for a rejected forgery.
    """
    if not isinstance(secret, str):
        raise TypeError(f"secret doit être une chaîne (str), pas {type(secret).__name__}.")
    if not secret:
        raise ValueError("secret est vide : toute signature faite sans secret passerait.")
    payload = _payload(raw_body)
    timestamp, signatures = _parse(signature_header)
    expected = signature(payload, secret, timestamp)
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
    return Event.from_json(event)
