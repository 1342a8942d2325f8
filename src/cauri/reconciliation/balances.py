"""What the operator says the connector account's wallet holds now, where its API says it
(GivesBalances): what finance compares with the ledger's clearing account of the operator."""

from __future__ import annotations

from cauri.kit.errors import InvalidRequest, ServerError
from cauri.operators.protocol import GivesBalances, StatementUnavailable
from cauri.reconciliation.sources import adapter_of
from cauri.runtime import Runtime


class NoBalanceApi(InvalidRequest):
    """The connector's operator gives no balance through its API."""


async def balances(runtime: Runtime, connector: str) -> dict[str, int]:
    """Currency → the balance now, in minor units; nothing is held while the operator is
    asked."""
    adapter = await adapter_of(runtime, connector)
    if not isinstance(adapter, GivesBalances):
        raise NoBalanceApi(
            f"L'opérateur de {connector} ne donne pas de solde par son API (MTN MoMo, pawaPay, "
            "Wave et CinetPay avec son API de transfert en donnent un) : lisez-le dans son "
            "espace marchand."
        )
    try:
        return dict(await adapter.balances())
    except StatementUnavailable as unavailable:
        raise ServerError(
            f"L'opérateur de {connector} n'a pas donné son solde : {unavailable}."
        ) from unavailable
