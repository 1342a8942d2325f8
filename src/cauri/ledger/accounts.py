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
    An external account mirrors money outside Cauri (an operator's float, a bank, what a
    merchant owes) and goes negative by design; so does an expense (what operators' fees cost
    the platform).
    """

    GUARDED = "guarded"
    REVENUE = "revenue"
    EXTERNAL = "external"
    EXPENSE = "expense"


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


def connector_wallet(connector: str, livemode: bool, currency: str) -> Account:
    """The wallet of one connector account at its operator (cauri.reconciliation): what the
    operator's statements give the balance of, negated (money in the wallet is a debit here).
    Operator clearing accounts hold what is in flight between a domain and a wallet."""
    return Account(
        f"connector:{connector}:wallet:{environment(livemode)}:{currency}",
        currency,
        livemode,
        Kind.EXTERNAL,
    )


def platform_bank(livemode: bool, currency: str) -> Account:
    """The platform's bank: where operators' wallets are topped up from and settled to."""
    return Account(
        f"platform:bank:{environment(livemode)}:{currency}", currency, livemode, Kind.EXTERNAL
    )


def operator_costs(livemode: bool, currency: str) -> Account:
    """What operators took from the platform's wallets (their fees, a loss they caused)."""
    return Account(
        f"platform:operator_costs:{environment(livemode)}:{currency}",
        currency,
        livemode,
        Kind.EXPENSE,
    )


def suspense(livemode: bool, currency: str) -> Account:
    """Money in a wallet whose owner is not known yet (a deposit Cauri never asked for),
    until finance books it to someone."""
    return Account(
        f"platform:suspense:{environment(livemode)}:{currency}", currency, livemode, Kind.EXTERNAL
    )


def merchant_receivable(merchant_id: str, livemode: bool, currency: str) -> Account:
    """What a merchant owes the platform: a correction its balance could not cover (never an
    overdraft of its balance). Negative while owed."""
    return Account(
        f"{merchant_prefix(merchant_id)}receivable:{environment(livemode)}:{currency}",
        currency,
        livemode,
        Kind.EXTERNAL,
    )


# Accounts that may be below zero (the ledger's `negative` check passes them): every one of
# a kind other than guarded and revenue, by the shape of its code.
MAY_BE_NEGATIVE = (
    "operator:%:clearing:%",
    "connector:%:wallet:%",
    "platform:topups:%",
    "platform:bank:%",
    "platform:operator_costs:%",
    "platform:suspense:%",
    "merchant:%:receivable:%",
)


def topup_source(livemode: bool, currency: str) -> Account:
    """Where merchants' bank transfers to the platform come from."""
    return Account(
        f"platform:topups:{environment(livemode)}:{currency}", currency, livemode, Kind.EXTERNAL
    )
