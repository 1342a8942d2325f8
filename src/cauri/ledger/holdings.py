"""What a merchant holds, read from the ledger for the balance (DESIGN: Balance). Only the
ledger knows how account codes are made: callers ask by merchant and environment."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.ledger import accounts
from cauri.ledger.service import balances

# An account's balance is its folded head plus its postings not folded yet (the ledger's
# rule); summed here over every account of the merchant in one environment, by code. The
# plans' escrow accounts are `merchant:{id}:plan:{plan}:escrow:{env}:{currency}`.
_ESCROW_BY_CURRENCY = text(
    "WITH mine AS ("
    "  SELECT code AS account, currency, balance AS amount FROM ledger_accounts "
    "  WHERE code LIKE :merchant_prefix AND livemode = :livemode "
    "  UNION ALL "
    "  SELECT account, currency, amount FROM ledger_postings "
    "  WHERE NOT folded AND account LIKE :merchant_prefix AND account LIKE :environment"
    ") SELECT currency, coalesce(sum(amount) FILTER (WHERE account LIKE :escrow), 0) "
    "FROM mine GROUP BY currency"
)


def _like_literal(value: str) -> str:
    """`value` matched literally in a LIKE pattern (merchant ids contain `_`)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


async def escrowed(session: AsyncSession, merchant_id: str, livemode: bool) -> dict[str, int]:
    """Escrow per currency, and with it every currency the merchant holds money in."""
    env = accounts.environment(livemode)
    prefix = f"{accounts.merchant_prefix(_like_literal(merchant_id))}"
    rows = await session.execute(
        _ESCROW_BY_CURRENCY,
        {
            "merchant_prefix": prefix + "%",
            "livemode": livemode,
            "environment": f"%:{env}:%",
            "escrow": f"{prefix}plan:%:escrow:{env}:%",
        },
    )
    return {currency: int(amount) for currency, amount in rows}


async def available(
    session: AsyncSession, merchant_id: str, livemode: bool, currencies: Sequence[str]
) -> dict[str, int]:
    """The merchant's available balance in each currency; locks nothing."""
    held = {c: accounts.merchant_available(merchant_id, livemode, c) for c in currencies}
    found = await balances(session, list(held.values()))
    return {currency: found[account] for currency, account in held.items()}


@dataclass(frozen=True)
class Receivable:
    """What a merchant owes the platform in one currency (accounts.merchant_receivable)."""

    merchant_id: str
    livemode: bool
    currency: str
    owed: int  # minor units, positive


_RECEIVABLES = text(
    "SELECT account, currency, -sum(amount) FROM ("
    "  SELECT account, currency, amount FROM ledger_postings "
    "  UNION ALL SELECT account, currency, amount FROM ledger_archived) AS every "
    "WHERE account LIKE 'merchant:%:receivable:%' "
    "GROUP BY account, currency HAVING sum(amount) <> 0 ORDER BY account"
)


async def receivables(session: AsyncSession) -> list[Receivable]:
    """Every merchant that owes something, by merchant."""
    found = []
    for code, currency, owed in await session.execute(_RECEIVABLES):
        # merchant:{id}:receivable:{environment}:{currency}
        _, merchant_id, _, environment, _ = code.split(":")
        live = environment == accounts.environment(True)
        found.append(Receivable(merchant_id, live, currency, int(owed)))
    return found
