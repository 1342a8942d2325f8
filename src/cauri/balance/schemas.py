"""The balance row (DESIGN: Balance): one per currency."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cauri.balance.service import CurrencyBalance
from cauri.balance.transactions import Line
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


# The kinds of the ledger's movements of a balance (cauri.ledger.movements).
BalanceTransactionType = Literal[
    "payment",
    "plan_release",
    "topup",
    "payout",
    "payout_reversal",
    "refund",
    "refund_reversal",
    "adjustment",  # finance's correction after a reconciliation (source: `discrepancy:ID`)
]


def balance_transaction_object(line: Line, livemode: bool) -> dict[str, Any]:
    currency = line.currency
    return {
        "type": line.type,
        "amount": to_major(line.amount, currency),
        "fee": to_major(line.fee, currency),
        "net": to_major(line.net, currency),
        "currency": currency,
        "source": line.source,
        "livemode": livemode,
        "created_at": line.created_at.isoformat(),
    }


class BalanceTransactionObject(BaseModel):
    """One movement of the balance, from the ledger: `net` = `amount` − `fee`, signed (a
    debit is negative). No id of its own: the ledger's are a sequence shared by every
    account, which would tell the platform's volume."""

    model_config = ConfigDict(extra="forbid")

    type: BalanceTransactionType
    amount: float = Field(description="Gross: what moved before the commission.")
    fee: float = Field(
        description="The commission taken from you in this movement (0 when the customer "
        "paid it on top)."
    )
    net: float = Field(description="What the balance received (negative: what it gave).")
    currency: Currency
    source: str | None = Field(
        description="The payment's id, the plan's, the payout's or refund's reference; a "
        "top-up's reason."
    )
    livemode: bool
    created_at: datetime
