"""The balance row (DESIGN: Balance): one per currency."""

from __future__ import annotations

from typing import Any

from cauri.balance.service import CurrencyBalance
from cauri.kit.money import to_major


def balance_object(row: CurrencyBalance, livemode: bool) -> dict[str, Any]:
    return {
        "currency": row.currency,
        "available": to_major(row.available, row.currency),
        "escrowed": to_major(row.escrowed, row.currency),
        "pending_payouts": to_major(row.pending_payouts, row.currency),
        "livemode": livemode,
    }
