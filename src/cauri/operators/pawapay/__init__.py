"""The pawaPay connector (kind `pawapay`): the aggregator that reaches most operators of the
catalogue (providers.PROVIDERS).

Settings, all optional: `signed_callbacks` (`true` when the account's callbacks are signed
in pawaPay's dashboard: only a verified one settles a payment) and `providers`
(`operator=PROVIDER,…` over the default table). Secret: `api_token` (the dashboard's API
token of that environment). The base URL is `https://api.sandbox.pawapay.io` or
`https://api.pawapay.io`."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from cauri.operators.config import ConnectorConfig, ConnectorKind
from cauri.operators.pawapay.connector import PawapayConnector
from cauri.operators.pawapay.providers import table
from cauri.operators.protocol import OperatorAdapter


def _build(config: ConnectorConfig) -> OperatorAdapter:
    return PawapayConnector(config)


def _check_settings(settings: Mapping[str, str]) -> None:
    table(settings.get("providers"))
    if settings.get("signed_callbacks", "false").lower() not in ("true", "false"):
        raise ValueError("Réglage signed_callbacks : true ou false.")


def _operators(settings: Mapping[str, str]) -> Collection[str]:
    return table(settings.get("providers")).keys()


KIND = ConnectorKind(
    name="pawapay",
    settings=("signed_callbacks", "providers"),
    optional_settings=("signed_callbacks", "providers"),
    secrets=("api_token",),
    build=_build,
    operators=_operators,
    check_settings=_check_settings,
)
