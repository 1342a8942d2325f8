"""PLACEHOLDER on the `connectors` branch, to be replaced at merge by the real `mtn_momo`
package (written in parallel): only its KIND's names, which are the operator-facing contract
(DESIGN: connector kinds), so that `cauri connectors add --kind mtn_momo` validates."""

from __future__ import annotations

from cauri.operators.config import ConnectorConfig, ConnectorKind
from cauri.operators.protocol import OperatorAdapter


def _build(config: ConnectorConfig) -> OperatorAdapter:
    raise NotImplementedError("the mtn_momo connector is not on this branch yet")


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
)
