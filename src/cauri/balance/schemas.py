"""The balance row (DESIGN: Balance): one per currency."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cauri.balance.service import CurrencyBalance
from cauri.kit.money import Currency, to_major


def balance_object(row: CurrencyBalance, livemode: bool) -> dict[str, Any]:
    return {
        "currency": row.currency,
        "available": to_major(row.available, row.currency),
        "escrowed": to_major(row.escrowed, row.currency),
        "pending_payouts": to_major(row.pending_payouts, row.currency),
        "livemode": livemode,
    }


class BalanceObject(BaseModel):
    """One currency's balance, as `balance_object` builds it (DESIGN: Balance)."""

    model_config = ConfigDict(extra="forbid")

    currency: Currency
    available: float = Field(description="What payouts and refunds can take now.")
    escrowed: float = Field(description="Held for installment plans until they complete.")
    pending_payouts: float = Field(
        description="Payouts sent and not yet settled, and those held for approval."
    )
    livemode: bool
