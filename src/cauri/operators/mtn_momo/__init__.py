"""The MTN MoMo Open API connector (kind `mtn_momo`): mtn (BJ), mtn_ci, mtn_cg.

Settings: `target_environment` (sent as X-Target-Environment: `sandbox`, `mtnbenin`,
`mtnivorycoast`, `mtncongo`, …) and `currency` (optional: the currency MTN is sent, EUR in its
sandbox; else the request's own). Secrets: `api_user`, `api_key`,
`collection_subscription_key`, `disbursement_subscription_key`. The base URL is the API host
(`https://sandbox.momodeveloper.mtn.com` in the sandbox)."""

from __future__ import annotations

from cauri.operators.config import ConnectorConfig, ConnectorKind
from cauri.operators.mtn_momo.connector import MtnMomoConnector
from cauri.operators.protocol import OperatorAdapter


def _build(config: ConnectorConfig) -> OperatorAdapter:
    return MtnMomoConnector(config)


KIND = ConnectorKind(
    name="mtn_momo",
    settings=("target_environment",),
    optional_settings=("currency",),
    secrets=(
        "api_user",
        "api_key",
        "collection_subscription_key",
        "disbursement_subscription_key",
    ),
    build=_build,
    operators=lambda _settings: ("mtn", "mtn_ci", "mtn_cg"),
)
