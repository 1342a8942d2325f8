"""Merchant-side SDK: webhook signature verification (`cauri.client.webhooks`)."""

from cauri.client.webhooks import (
    InvalidSignature,
    MalformedHeader,
    MalformedPayload,
    StaleTimestamp,
    WebhookVerificationError,
    verify,
)

__all__ = [
    "InvalidSignature",
    "MalformedHeader",
    "MalformedPayload",
    "StaleTimestamp",
    "WebhookVerificationError",
    "verify",
]
