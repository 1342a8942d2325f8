"""Every movement of money, by name: domains say what happened, the ledger decides which
accounts it debits and credits (DESIGN invariant 2). Nothing outside `cauri.ledger` builds
an entry or an account code.

The kind of each ledger transaction names the movement; a reversal's kind is its
movement's with `_reversal`. Amounts are minor units of the movement's currency; a zero
part (no fee, no creation-fee part) is simply not posted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.ledger import accounts
from cauri.ledger.accounts import Account
from cauri.ledger.service import (
    Debit,
    Entry,
    NewTransaction,
    appendable,
    balance,
    debitable,
    transfer,
)


class Movement(StrEnum):
    COLLECTED = "payment"  # a payment (or an instalment) collected from its customer
    ESCROW_RELEASED = "plan_release"  # a completed plan's escrow to the merchant
    PENALTY_TAKEN = "plan_penalty"  # a cancelled plan's penalty to the platform
    PLAN_REFUNDED = "plan_refund"  # a cancelled plan's refund to its customer
    PAID_OUT = "payout"  # a payout sent from the merchant's balance
    REFUNDED = "refund"  # one payment's refund sent to its payer
    TOPPED_UP = "topup"  # a bank transfer to the merchant's balance


@dataclass(frozen=True)
class Holder:
    """Whose money a movement takes or gives: a merchant's balance, or one plan's escrow."""

    merchant_id: str
    livemode: bool
    currency: str
    plan_id: str | None = None

    @property
    def account(self) -> Account:
        if self.plan_id is None:
            return accounts.merchant_available(self.merchant_id, self.livemode, self.currency)
        return accounts.plan_escrow(self.merchant_id, self.plan_id, self.livemode, self.currency)


def balance_of(merchant_id: str, livemode: bool, currency: str) -> Holder:
    return Holder(merchant_id, livemode, currency)


def escrow_of(merchant_id: str, plan_id: str, livemode: bool, currency: str) -> Holder:
    return Holder(merchant_id, livemode, currency, plan_id)


def _revenue(name: str, holder: Holder, amount: int) -> Entry:
    return Entry(accounts.platform(name, holder.livemode, holder.currency), amount)


def _clearing(operator: str, holder: Holder, amount: int) -> Entry:
    return Entry(accounts.operator_clearing(operator, holder.livemode, holder.currency), amount)


async def _record(
    session: AsyncSession,
    movement: Movement | str,
    reference: str,
    entries: list[Entry],
    at: datetime,
) -> None:
    await transfer(
        session,
        kind=str(movement),
        reference=reference,
        entries=[entry for entry in entries if entry.amount],
        at=at,
    )


def _collection(into: Holder, operator: str, counted: int, fee: int, plan_fee: int) -> list[Entry]:
    return [
        _clearing(operator, into, -(counted + plan_fee + fee)),
        Entry(into.account, counted),
        _revenue("plan_fees", into, plan_fee),
        _revenue("fees", into, fee),
    ]


async def collected(
    session: AsyncSession,
    *,
    into: Holder,
    operator: str,
    counted: int,
    fee: int,
    plan_fee: int = 0,
    reference: str,
    at: datetime,
) -> None:
    """A customer paid `counted + plan_fee + fee` through `operator`: `counted` to the
    merchant's balance (or a plan's escrow), the creation-fee part and the commission to
    the platform."""
    await _record(
        session,
        Movement.COLLECTED,
        reference,
        _collection(into, operator, counted, fee, plan_fee),
        at,
    )


def collected_with(
    *, into: Holder, operator: str, counted: int, fee: int, reference: str, at: datetime
) -> NewTransaction:
    """`collected`, as the values of `service.appended`: for the statement that
    records a payment already decided, its money in the same round trip (a collection
    only credits guarded accounts, so it locks nothing)."""
    entries = _collection(into, operator, counted, fee, 0)
    return appendable(
        kind=str(Movement.COLLECTED),
        reference=reference,
        entries=[entry for entry in entries if entry.amount],
        at=at,
    )


async def escrow_released(
    session: AsyncSession, *, escrow: Holder, amount: int, reference: str, at: datetime
) -> None:
    """A completed plan's escrow, in one transfer, to its merchant's balance."""
    balance = balance_of(escrow.merchant_id, escrow.livemode, escrow.currency)
    await _record(
        session,
        Movement.ESCROW_RELEASED,
        reference,
        [Entry(escrow.account, -amount), Entry(balance.account, amount)],
        at,
    )


async def penalty_taken(
    session: AsyncSession, *, escrow: Holder, amount: int, reference: str, at: datetime
) -> None:
    await _record(
        session,
        Movement.PENALTY_TAKEN,
        reference,
        [Entry(escrow.account, -amount), _revenue("penalties", escrow, amount)],
        at,
    )


@dataclass(frozen=True)
class Disbursal:
    """`amount` sent through `operator` from `source`, which also pays the platform `fee`."""

    movement: Movement
    source: Holder
    operator: str
    amount: int
    fee: int
    reference: str

    def entries(self) -> list[Entry]:
        return [
            Entry(self.source.account, -(self.amount + self.fee)),
            _clearing(self.operator, self.source, self.amount),
            _revenue("fees", self.source, self.fee),
        ]


async def disbursed(session: AsyncSession, disbursal: Disbursal, at: datetime) -> None:
    """Raises `Overdraft` (nothing written) when the source cannot cover it."""
    await _record(session, disbursal.movement, disbursal.reference, disbursal.entries(), at)


def disbursed_with(disbursal: Disbursal, at: datetime) -> Debit:
    """`disbursed`, as the values of `service.debited`: for the statement that
    records a disbursal its operator carried out at once, its debit in the same round trip.
    A source that does not cover it fails that statement (`service.NOT_COVERED`)."""
    return debitable(
        kind=str(disbursal.movement),
        reference=disbursal.reference,
        entries=[entry for entry in disbursal.entries() if entry.amount],
        at=at,
    )


async def covers(session: AsyncSession, disbursal: Disbursal) -> bool:
    """Whether the source covers the disbursal now, read without a lock: for an answer that
    moves no money (a refusal), which must still put a short balance first."""
    return await balance(session, disbursal.source.account) >= disbursal.amount + disbursal.fee


async def reversed_disbursal(session: AsyncSession, disbursal: Disbursal, at: datetime) -> None:
    """The exact reverse of a `disbursed` the operator did not carry out."""
    entries = [Entry(e.account, -e.amount) for e in disbursal.entries()]
    await _record(session, f"{disbursal.movement}_reversal", disbursal.reference, entries, at)


async def topped_up(
    session: AsyncSession, *, into: Holder, amount: int, reference: str, at: datetime
) -> None:
    """A bank transfer received by the platform for the merchant."""
    source = accounts.topup_source(into.livemode, into.currency)
    await _record(
        session,
        Movement.TOPPED_UP,
        reference,
        [Entry(source, -amount), Entry(into.account, amount)],
        at,
    )
