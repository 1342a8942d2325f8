"""The merchant's balance, read from the ledger (DESIGN: Balance), and its top-ups
(`cauri merchants credit`: a bank transfer received by the platform)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import InvalidRequest
from cauri.kit.money import Currency, to_minor
from cauri.ledger import accounts
from cauri.ledger.service import Entry, balances, transfer
from cauri.merchants.service import merchants
from cauri.models import Payout
from cauri.operators.protocol import Outcome

DEFAULT_CURRENCY = "XOF"


@dataclass(frozen=True)
class CurrencyBalance:
    currency: str
    available: int
    escrowed: int
    pending_payouts: int


def _like_literal(value: str) -> str:
    """`value` matched literally in a LIKE pattern (merchant ids contain `_`)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


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


async def _escrowed(session: AsyncSession, merchant_id: str, livemode: bool) -> dict[str, int]:
    """Escrow per currency, and with it every currency the merchant holds money in."""
    env = "live" if livemode else "test"
    prefix = f"merchant:{_like_literal(merchant_id)}:"
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


async def _pending_payouts(
    session: AsyncSession, merchant_id: str, livemode: bool
) -> dict[str, int]:
    """What pending payouts have taken from the balance (held ones have taken nothing)."""
    rows = await session.execute(
        select(Payout.currency, func.sum(Payout.amount + Payout.fee_amount))
        .where(
            Payout.merchant_id == merchant_id,
            Payout.livemode == livemode,
            Payout.status == Outcome.PENDING.value,
            Payout.debited,
        )
        .group_by(Payout.currency)
    )
    return {currency: int(amount) for currency, amount in rows}


async def merchant_balances(
    session: AsyncSession, merchant_id: str, livemode: bool
) -> list[CurrencyBalance]:
    """One row per currency the merchant has in the environment, XOF always."""
    escrowed = await _escrowed(session, merchant_id, livemode)
    pending = await _pending_payouts(session, merchant_id, livemode)
    currencies = sorted({DEFAULT_CURRENCY, *escrowed, *pending})
    available = await balances(
        session, [accounts.merchant_available(merchant_id, livemode, c) for c in currencies]
    )
    return [
        CurrencyBalance(
            currency=currency,
            available=available[accounts.merchant_available(merchant_id, livemode, currency)],
            escrowed=escrowed.get(currency, 0),
            pending_payouts=pending.get(currency, 0),
        )
        for currency in currencies
    ]


async def credit(
    session: AsyncSession,
    merchant_id: str,
    *,
    livemode: bool,
    amount: Decimal,
    currency: str,
    reason: str,
    now: datetime,
) -> int:
    """A top-up from the platform's top-up account; returns the new available balance."""
    await merchants.get(session, merchant_id)
    if currency not in Currency.__members__:
        raise InvalidRequest.field("currency", f"Devise inconnue : {currency}.")
    minor = to_minor(amount, currency)
    if minor <= 0:
        raise InvalidRequest.field("amount", "Le montant crédité doit être positif.")
    if not reason.strip():
        raise InvalidRequest.field("reason", "Le motif du crédit est obligatoire.")
    available = accounts.merchant_available(merchant_id, livemode, currency)
    await transfer(
        session,
        kind="topup",
        reference=reason,
        entries=[Entry(accounts.topup_source(livemode, currency), -minor), Entry(available, minor)],
        at=now,
    )
    return (await balances(session, [available]))[available]
