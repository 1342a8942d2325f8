"""Ledger account codes (DESIGN invariant 2). A code names its owner, environment and currency."""

from __future__ import annotations

from dataclasses import dataclass


def _env(livemode: bool) -> str:
    return "live" if livemode else "test"


@dataclass(frozen=True, order=True)
class Account:
    code: str
    currency: str
    livemode: bool
    # External accounts mirror money outside Cauri (an operator's float, a bank): they go
    # negative by design. Every other account is guarded against overdraft.
    external: bool = False


def merchant_available(merchant_id: str, livemode: bool, currency: str) -> Account:
    return Account(
        f"merchant:{merchant_id}:available:{_env(livemode)}:{currency}", currency, livemode
    )


def plan_escrow(merchant_id: str, plan_id: str, livemode: bool, currency: str) -> Account:
    """Under the merchant's code prefix, so a merchant's escrow sums by prefix."""
    return Account(
        f"merchant:{merchant_id}:plan:{plan_id}:escrow:{_env(livemode)}:{currency}",
        currency,
        livemode,
    )


def platform(kind: str, livemode: bool, currency: str) -> Account:
    """Platform revenue: `fees`, `plan_fees`, `penalties`."""
    return Account(f"platform:{kind}:{_env(livemode)}:{currency}", currency, livemode)


def operator_clearing(operator: str, livemode: bool, currency: str) -> Account:
    return Account(
        f"operator:{operator.lower()}:clearing:{_env(livemode)}:{currency}",
        currency,
        livemode,
        external=True,
    )


def topup_source(livemode: bool, currency: str) -> Account:
    """Where merchants' bank transfers to the platform come from."""
    return Account(
        f"platform:topups:{_env(livemode)}:{currency}", currency, livemode, external=True
    )
