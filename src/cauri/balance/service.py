"""The merchant's balance, read from the ledger (DESIGN: Balance), and its top-ups
(`cauri merchants credit`: a bank transfer received by the platform)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import InvalidRequest
from cauri.kit.money import Currency, to_minor
from cauri.ledger import holdings, movements
from cauri.merchants.service import merchants
from cauri.models import Payout
from cauri.models.payouts import APPROVAL_REQUIRED
from cauri.operators.protocol import Outcome

DEFAULT_CURRENCY = "XOF"


@dataclass(frozen=True)
class CurrencyBalance:
    currency: str
    available: int
    escrowed: int
    pending_payouts: int


async def _pending_payouts(
    session: AsyncSession, merchant_id: str, livemode: bool
) -> dict[str, int]:
    """What pending payouts take from the balance: those sent, which have taken it, and
    those held for approval, which will take it once approved (and have taken nothing yet:
    `available` still counts it)."""
    rows = await session.execute(
        select(Payout.currency, func.sum(Payout.amount + Payout.fee_amount))
        .where(
            Payout.merchant_id == merchant_id,
            Payout.livemode == livemode,
            Payout.status == Outcome.PENDING.value,
            or_(Payout.debited, Payout.approval == APPROVAL_REQUIRED),
        )
        .group_by(Payout.currency)
    )
    return {currency: int(amount) for currency, amount in rows}


async def merchant_balances(
    session: AsyncSession, merchant_id: str, livemode: bool
) -> list[CurrencyBalance]:
    """One row per currency the merchant has in the environment, XOF always."""
    escrowed = await holdings.escrowed(session, merchant_id, livemode)
    pending = await _pending_payouts(session, merchant_id, livemode)
    currencies = sorted({DEFAULT_CURRENCY, *escrowed, *pending})
    available = await holdings.available(session, merchant_id, livemode, currencies)
    return [
        CurrencyBalance(
            currency=currency,
            available=available[currency],
            escrowed=escrowed.get(currency, 0),
            pending_payouts=pending.get(currency, 0),
        )
        for currency in currencies
    ]


async def credit_amount(
    session: AsyncSession, merchant_id: str, *, amount: Decimal, currency: str, reason: str
) -> int:
    """A credit's amount in minor units, once it is known to be one that `credit` makes (a
    credit held for a second person's approval is checked when asked)."""
    await merchants.get(session, merchant_id)
    if currency not in Currency.__members__:
        raise InvalidRequest.field("currency", f"Devise inconnue : {currency}.")
    minor = to_minor(amount, currency)
    if minor <= 0:
        raise InvalidRequest.field("amount", "Le montant crédité doit être positif.")
    if not reason.strip():
        raise InvalidRequest.field("reason", "Le motif du crédit est obligatoire.")
    return minor


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
    minor = await credit_amount(
        session, merchant_id, amount=amount, currency=currency, reason=reason
    )
    into = movements.balance_of(merchant_id, livemode, currency)
    await movements.topped_up(session, into=into, amount=minor, reference=reason, at=now)
    return (await holdings.available(session, merchant_id, livemode, [currency]))[currency]
