"""The Orange Money Web Payment connector (kind `orange_money`): orange_ci, orange_sn,
orange_ml, orange_bf collections through Orange's hosted payment page.

Settings: `country` (the endpoint's country: `dev` in Orange's sandbox, else `ci`, `sn`,
`ml`, `bf`, …), `return_url` (where the customer lands when the payment names no
`return_url`), `currency` (optional: `OUV` is sent in `dev`, else the payment's), `lang`
(optional, `fr`). Secrets: `client_id`, `client_secret` (the application's credentials),
`merchant_key` (the web payment offer's). The base URL is `https://api.orange.com`. Collect
only: Orange's Web Payment API has no payout or refund (route those elsewhere)."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from cauri.operators.config import ConnectorConfig, ConnectorKind
from cauri.operators.orange_money.connector import URL_LENGTH, OrangeMoneyConnector
from cauri.operators.protocol import OperatorAdapter

COUNTRIES = {"ci": "orange_ci", "sn": "orange_sn", "ml": "orange_ml", "bf": "orange_bf"}


def _build(config: ConnectorConfig) -> OperatorAdapter:
    return OrangeMoneyConnector(config)


def _check_settings(settings: Mapping[str, str]) -> None:
    country = settings.get("country", "")
    if country != "dev" and country not in COUNTRIES:
        raise ValueError(f"Réglage country : dev, ou l'un de {', '.join(sorted(COUNTRIES))}.")
    back = settings.get("return_url", "")
    parts = urlsplit(back)
    if parts.scheme not in ("https", "http") or not parts.hostname or len(back) > URL_LENGTH:
        raise ValueError(
            f"Réglage return_url : une URL https:// de {URL_LENGTH} caractères au plus."
        )


def _operators(settings: Mapping[str, str]) -> tuple[str, ...]:
    country = settings.get("country", "")
    # The sandbox stands for any of them.
    return tuple(COUNTRIES.values()) if country == "dev" else (COUNTRIES.get(country, ""),)


KIND = ConnectorKind(
    name="orange_money",
    settings=("country", "return_url", "currency", "lang"),
    optional_settings=("currency", "lang"),
    secrets=("client_id", "client_secret", "merchant_key"),
    build=_build,
    operations=("collect",),
    operators=_operators,
    check_settings=_check_settings,
)
