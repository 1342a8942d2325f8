"""The CinetPay connector (kind `cinetpay`): live card payments (VISA, MASTERCARD) and the
Mobile Money operators CinetPay's page offers, through its Checkout API v2.

Settings: `site_id`; `return_url` (where a Mobile Money customer lands when the payment names
none); the card holder's defaults CinetPay's card form needs and Cauri's API does not ask
(`card_phone_number`, `card_address`, `card_city`, `card_country` (ISO 2), `card_state`,
`card_zip_code`).
Secrets: `apikey`, `secret_key` (the notifications' HMAC key), and for an account with
CinetPay's Transfer API `transfer_password` (payouts, plans' refunds; `transfer_base_url`,
default `https://client.cinetpay.com`). The base URL is `https://api-checkout.cinetpay.com`.
A payment's refund is not offered by CinetPay's API."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from cauri.operators.cinetpay.connector import CinetPayConnector, CinetPayTransfersConnector
from cauri.operators.config import ConnectorConfig, ConnectorKind
from cauri.operators.protocol import OperatorAdapter

# What CinetPay's page offers for the catalogue (its payment methods by country).
OPERATORS = (
    "VISA",
    "MASTERCARD",
    "orange_ci",
    "moov_ci",
    "mtn_ci",
    "wave_ci",
    "orange_ml",
    "mobicash_ml",
    "orange_sn",
    "free_sn",
    "wave_sn",
    "togocom_tg",
    "moov_tg",
    "orange_bf",
    "moov_bf",
)
CARD_HOLDER = (
    "card_phone_number",
    "card_address",
    "card_city",
    "card_country",
    "card_state",
    "card_zip_code",
)


def _build(config: ConnectorConfig) -> OperatorAdapter:
    if config.secrets.get("transfer_password"):
        return CinetPayTransfersConnector(config)
    return CinetPayConnector(config)


def _check_settings(settings: Mapping[str, str]) -> None:
    parts = urlsplit(settings.get("return_url", ""))
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError("Réglage return_url : une URL https:// (la page de retour du client).")


KIND = ConnectorKind(
    name="cinetpay",
    settings=("site_id", "return_url", "transfer_base_url", *CARD_HOLDER),
    optional_settings=("transfer_base_url", *CARD_HOLDER),
    secrets=("apikey", "secret_key"),
    optional_secrets=("transfer_password",),
    build=_build,
    operations=("collect", "disburse"),
    operators=lambda _settings: tuple(op.lower() for op in OPERATORS),
    check_settings=_check_settings,
)
