"""The MTN MoMo Open API connector (kind `mtn_momo`): mtn (BJ), mtn_ci, mtn_cg.

Settings: `target_environment` (sent as X-Target-Environment: `sandbox`, `mtnbenin`,
`mtnivorycoast`, `mtncongo`, …) and `currency` (optional, and only with
`target_environment=sandbox`: the currency MTN's sandbox is sent, EUR; anywhere else MTN is
sent each request's own currency, whichever of the account's operators it is for).
Secrets: `api_user`, `api_key`, `collection_subscription_key`,
`disbursement_subscription_key`. The base URL is the API host
(`https://sandbox.momodeveloper.mtn.com` in the sandbox)."""

from __future__ import annotations

from collections.abc import Mapping

from cauri.operators.config import ConnectorConfig, ConnectorKind
from cauri.operators.mtn_momo.connector import SANDBOX, MtnMomoConnector
from cauri.operators.protocol import OperatorAdapter


def _build(config: ConnectorConfig) -> OperatorAdapter:
    return MtnMomoConnector(config)


def _check_settings(settings: Mapping[str, str]) -> None:
    # One account carries mtn (XOF), mtn_ci (XOF) and mtn_cg (XAF): a currency forced on all
    # of them outside the sandbox would send a payment in another currency than its own.
    if settings.get("currency") and settings.get("target_environment") != SANDBOX:
        raise ValueError(
            "Le réglage currency ne vaut que dans le bac à sable de MTN "
            f"(target_environment={SANDBOX}, qui n'accepte que l'EUR) : ailleurs, MTN reçoit "
            "la devise de chaque paiement. Retirez-le."
        )


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
    check_settings=_check_settings,
)
