"""A webhook endpoint's signing secret (`whsec_…`) at rest: encrypted with the keyring
(cauri.connectors.secrets) under its merchant and environment, never written in clear. Rows
written before migration 0025 keep it in clear until `cauri secrets rotate` seals them; it
reads both. The merchant still reads its secret in clear (GET /webhooks/endpoint), and
signatures are made with it as before."""

from __future__ import annotations

from cauri.config import Settings
from cauri.connectors.secrets import SecretBox, keyring
from cauri.kit.ids import random_secret
from cauri.models import WebhookEndpoint

WEBHOOK_SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret
_FIELD = "whsec"


def label(merchant_id: str, livemode: bool) -> str:
    """What binds a sealed secret to its endpoint: moved to another, it is refused."""
    return f"webhook-endpoint:{merchant_id}:{'live' if livemode else 'test'}"


def issue(box: SecretBox | None, endpoint: WebhookEndpoint) -> str:
    """Gives the endpoint a new secret, sealed; returns it in clear, to show. Without a key
    (`box` None: a development service on loopback, where the operator CLI keeps working
    as written) it is kept in clear, as before migration 0025, and sealed as soon as a key
    is set (`cauri migrate`, `serve`, `secrets rotate`)."""
    secret = WEBHOOK_SECRET_PREFIX + random_secret(32)
    if box is None:
        endpoint.secret, endpoint.sealed_secret = secret, None
        return secret
    endpoint.sealed_secret = seal(box, endpoint.merchant_id, endpoint.livemode, secret)
    endpoint.secret = None
    return secret


def seal(box: SecretBox, merchant_id: str, livemode: bool, secret: str) -> bytes:
    return box.encrypt(label(merchant_id, livemode), {_FIELD: secret})


def reveal(
    settings: Settings, merchant_id: str, livemode: bool, sealed: bytes | None, clear: str | None
) -> str:
    """The secret in clear, from a sealed row (the keyring needed) or one written before."""
    if sealed is None:
        assert clear is not None  # the table's check: one of the two
        return clear
    return keyring(settings).decrypt(label(merchant_id, livemode), sealed)[_FIELD]


def revealed(settings: Settings, endpoint: WebhookEndpoint) -> str:
    return reveal(
        settings, endpoint.merchant_id, endpoint.livemode, endpoint.sealed_secret, endpoint.secret
    )
