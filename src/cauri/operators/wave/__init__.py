"""The Wave connector (kind `wave`): wave_sn, wave_ci, wave_bf, through Wave's Checkout and
Payout APIs.

Setting: `return_url` (where customers land after paying on Wave when the payment names no
`return_url`; https). Secrets: `api_key` (a Wave Business API key allowed the Checkout and
Payout APIs), `webhook_secret` (the secret of the webhook set in the Wave Business Portal to
this account's callback URL). The base URL is `https://api.wave.com`: Wave has no sandbox."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from cauri.operators.config import ConnectorConfig, ConnectorKind
from cauri.operators.protocol import OperatorAdapter
from cauri.operators.wave.connector import WaveConnector


def _build(config: ConnectorConfig) -> OperatorAdapter:
    return WaveConnector(config)


def _check_settings(settings: Mapping[str, str]) -> None:
    parts = urlsplit(settings.get("return_url", ""))
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError("Réglage return_url : une URL https:// (la page de retour du client).")


KIND = ConnectorKind(
    name="wave",
    settings=("return_url",),
    secrets=("api_key", "webhook_secret"),
    build=_build,
    operators=lambda _settings: ("wave_sn", "wave_ci", "wave_bf"),
    check_settings=_check_settings,
)
