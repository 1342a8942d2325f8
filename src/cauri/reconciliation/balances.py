"""What the operator says the connector account's wallet holds now, where its API says it
(GivesBalances), beside what the ledger's wallet of the connector account holds
(cauri.reconciliation.wallets): an operation the operator has carried out and Cauri not yet
settled is a difference until it settles."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.kit.errors import InvalidRequest, ServerError
from cauri.ledger import movements
from cauri.operators.protocol import GivesBalances, StatementUnavailable
from cauri.reconciliation.sources import adapter_of
from cauri.reconciliation.wallets import LIVE
from cauri.runtime import Runtime


class NoBalanceApi(InvalidRequest):
    """The connector's operator gives no balance through its API."""


@dataclass(frozen=True)
class Balance:
    currency: str
    operator: int  # minor units
    cauri: int

    @property
    def difference(self) -> int:
        return self.operator - self.cauri


async def compared(runtime: Runtime, connector: str) -> list[Balance]:
    """Each currency the operator or the ledger holds, the operator's answer first."""
    stated = await balances(runtime, connector)
    async with runtime.sessionmaker() as session:
        held = {
            currency: await movements.wallet_balance(session, connector, LIVE, currency)
            for currency in stated
        }
    return [Balance(c, stated[c], held[c]) for c in sorted(stated)]


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
