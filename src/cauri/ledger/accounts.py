"""Ledger account codes (DESIGN invariant 2). A code names its owner, environment and currency."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


def environment(livemode: bool) -> str:
    return "live" if livemode else "test"


def merchant_prefix(merchant_id: str) -> str:
    """What every account code of a merchant starts with (its balances and its escrows)."""
    return f"merchant:{merchant_id}:"


class Kind(StrEnum):
    """How the ledger treats an account's debits (DESIGN invariant 3).

    A guarded account holds money its owner may take out (a merchant's balance, a plan's
    escrow): a debit locks its row, folds its credits and refuses an overdraft. The other kinds
    are append-only: never locked, never folded, their balance is the sum of their postings.
    Platform revenue is debited only to reverse a fee it was credited (a failed payout), so it
    never goes negative, and such a reversal waits on no lock every merchant's fees share.
    An external account mirrors money outside Cauri (an operator's float, a bank) and goes
    negative by design.
    """

    GUARDED = "guarded"
    REVENUE = "revenue"
    EXTERNAL = "external"


@dataclass(frozen=True, order=True)
class Account:
    code: str
    currency: str
    livemode: bool
    kind: Kind = Kind.GUARDED

    @property
    def guarded(self) -> bool:
        return self.kind is Kind.GUARDED


def merchant_available(merchant_id: str, livemode: bool, currency: str) -> Account:
    return Account(
        f"{merchant_prefix(merchant_id)}available:{environment(livemode)}:{currency}",
        currency,
        livemode,
    )


def plan_escrow(merchant_id: str, plan_id: str, livemode: bool, currency: str) -> Account:
    """Under the merchant's code prefix, so a merchant's escrow sums by prefix."""
    return Account(
        f"{merchant_prefix(merchant_id)}plan:{plan_id}:escrow:{environment(livemode)}:{currency}",
        currency,
        livemode,
    )


def platform(kind: str, livemode: bool, currency: str) -> Account:
    """Platform revenue: `fees`, `plan_fees`, `penalties`."""
    return Account(
        f"platform:{kind}:{environment(livemode)}:{currency}", currency, livemode, Kind.REVENUE
    )


def operator_clearing(operator: str, livemode: bool, currency: str) -> Account:
    return Account(
        f"operator:{operator.lower()}:clearing:{environment(livemode)}:{currency}",
        currency,
        livemode,
        Kind.EXTERNAL,
    )


def topup_source(livemode: bool, currency: str) -> Account:
    """Where merchants' bank transfers to the platform come from."""
    return Account(
        f"platform:topups:{environment(livemode)}:{currency}", currency, livemode, Kind.EXTERNAL
    )
