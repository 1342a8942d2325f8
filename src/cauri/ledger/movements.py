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
    Overdraft,
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
    # What moved a connector account's wallet at its operator (cauri.reconciliation):
    CARRIED = "carried"  # one of Cauri's operations, carried out (operator clearing ↔ wallet)
    WALLET_OPENING = "wallet_opening"  # its balance when Cauri first read its statement
    WALLET_TOPUP = "wallet_topup"  # the platform's bank to the wallet
    WALLET_SETTLEMENT = "wallet_settlement"  # the wallet to the platform's bank
    CORRECTED = "adjustment"  # a discrepancy finance resolved with money


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


def _wallet(connector: str, livemode: bool, currency: str, into: int) -> Entry:
    # Money into the wallet is a debit of its (external) account.
    return Entry(accounts.connector_wallet(connector, livemode, currency), -into)


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


@dataclass(frozen=True)
class Carried:
    """A live operation a connector account carried out: `into_wallet` (signed: a
    collection's amount in, a disbursement's out) moves from the operator's clearing account,
    where its domain booked it, to the connector account's wallet."""

    connector: str
    operator: str
    livemode: bool
    currency: str
    into_wallet: int
    reference: str  # its subject's (the payment, payout, refund): beside its domain's own


async def carried(session: AsyncSession, carried: Carried, at: datetime) -> None:
    clearing = accounts.operator_clearing(carried.operator, carried.livemode, carried.currency)
    wallet = _wallet(carried.connector, carried.livemode, carried.currency, carried.into_wallet)
    await _record(
        session,
        Movement.CARRIED,
        carried.reference,
        [wallet, Entry(clearing, carried.into_wallet)],
        at,
    )


async def wallet_moved(
    session: AsyncSession,
    movement: Movement,
    *,
    connector: str,
    livemode: bool,
    currency: str,
    into_wallet: int,
    reference: str,
    at: datetime,
) -> None:
    """Between the platform's bank and a wallet, outside Cauri's operations: its opening
    balance, a top-up, a settlement (`into_wallet` negative)."""
    bank = accounts.platform_bank(livemode, currency)
    await _record(
        session,
        movement,
        reference,
        [_wallet(connector, livemode, currency, into_wallet), Entry(bank, into_wallet)],
        at,
    )


async def wallet_balance(
    session: AsyncSession, connector: str, livemode: bool, currency: str
) -> int:
    """What the ledger says is in the wallet now (the operator's sign: money in is
    positive)."""
    return -await balance(session, accounts.connector_wallet(connector, livemode, currency))


class Counterpart(StrEnum):
    """What a correcting entry may move money to or from, beside a wallet."""

    MERCHANT = "merchant"  # a merchant's balance (owner: its id)
    FEES = "fees"  # the platform's fee revenue
    OPERATOR_COSTS = "operator_costs"  # the platform's expense
    SUSPENSE = "suspense"  # money whose owner is not known yet
    CLEARING = "clearing"  # an operator's clearing account (owner: the operator's code)


@dataclass(frozen=True)
class Part:
    """`amount` to `counterpart` (negative: taken from it)."""

    counterpart: Counterpart
    amount: int
    owner: str | None = None

    def account(self, livemode: bool, currency: str) -> Account:
        owner = self.owner or ""
        match self.counterpart:
            case Counterpart.MERCHANT:
                return accounts.merchant_available(owner, livemode, currency)
            case Counterpart.FEES:
                return accounts.platform("fees", livemode, currency)
            case Counterpart.OPERATOR_COSTS:
                return accounts.operator_costs(livemode, currency)
            case Counterpart.SUSPENSE:
                return accounts.suspense(livemode, currency)
            case Counterpart.CLEARING:
                return accounts.operator_clearing(owner, livemode, currency)


@dataclass(frozen=True)
class Correction:
    """A correcting entry of a connector account's wallet: each part to its counterpart,
    the wallet taking the rest (a part of 100 to a merchant with nothing else: 100 came into
    the wallet for that merchant)."""

    connector: str
    livemode: bool
    currency: str
    parts: tuple[Part, ...]
    reference: str  # what it corrects (the discrepancy)

    def entries(self) -> list[Entry]:
        posted = [Entry(p.account(self.livemode, self.currency), p.amount) for p in self.parts]
        into = sum(p.amount for p in self.parts)
        return [*posted, _wallet(self.connector, self.livemode, self.currency, into)]


_ATTEMPTS = 5


async def corrected(session: AsyncSession, correction: Correction, at: datetime) -> list[Entry]:
    """Posts the correction; returns its entries as posted. What a merchant's balance cannot
    cover is taken from what it has and the rest held as its receivable (never an
    overdraft); a balance that moves meanwhile is read again."""
    entries = correction.entries()
    for _ in range(_ATTEMPTS):
        try:
            await _record(session, Movement.CORRECTED, correction.reference, entries, at)
            return [entry for entry in entries if entry.amount]
        except Overdraft as short:
            entries = _with_receivable(entries, short)
    raise RuntimeError("a merchant's balance kept moving: correction not posted")


def _with_receivable(entries: list[Entry], short: Overdraft) -> list[Entry]:
    merchant_id = short.account.code.split(":")[1]
    receivable = accounts.merchant_receivable(
        merchant_id, short.account.livemode, short.account.currency
    )
    debit = -sum(e.amount for e in entries if e.account == short.account)
    covered = max(short.balance, 0)
    rest = [e for e in entries if e.account not in (short.account, receivable)]
    owed = debit - covered + -sum(e.amount for e in entries if e.account == receivable)
    return [*rest, Entry(short.account, -covered), Entry(receivable, -owed)]
