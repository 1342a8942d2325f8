"""The only code that moves money: balanced transactions of appended postings.

A credit appends a posting and locks nothing. A debit of a guarded account locks that
account's row (several in code order, so two debits never deadlock), folds the postings not
yet folded into the cached balance, refuses an overdraft, and appends its posting already
folded (DESIGN invariant 3). A debit of any other account (platform revenue, external) is
appended like a credit: those rows are never locked, their postings never folded. The lock,
fold, check and debit are one server-side call (`ledger_debit`, migration 0020), so that a
debit is one round trip and its statement can carry the rest of its transaction's writes.

Folding marks postings `folded` under the lock rather than advancing a checkpoint id: a
credit that commits after a later-numbered one is still unfolded, and the next debit folds it.
An account's effect in a transaction is its net: several postings to one account count as
one debit (or one credit) of their sum.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    CTE,
    BigInteger,
    Boolean,
    ColumnElement,
    DateTime,
    FromClause,
    Select,
    Table,
    Text,
    func,
    insert,
    literal_column,
    select,
    text,
    true,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.binds import Binds
from cauri.ledger.accounts import Account
from cauri.models import LedgerPosting, LedgerTransaction


class LedgerError(Exception):
    pass


class Unbalanced(LedgerError):
    pass


class Overdraft(LedgerError):
    """A guarded account cannot cover its debit. A plain class, not a frozen dataclass:
    Python assigns `__traceback__` to exceptions as they pass through context managers."""

    def __init__(self, account: Account, balance: int, debit: int) -> None:
        super().__init__(f"{account.code}: balance {balance} cannot cover a debit of {debit}")
        self.account = account
        self.balance = balance
        self.debit = debit


@dataclass(frozen=True)
class Entry:
    account: Account
    amount: int


_TRANSACTIONS = cast(Table, LedgerTransaction.__table__)
_POSTINGS = cast(Table, LedgerPosting.__table__)


@dataclass(frozen=True)
class NewTransaction:
    """One transaction and its postings, as `appended` writes them (`appendable`,
    `debitable`): the postings' columns side by side."""

    kind: str
    reference: str | None
    livemode: bool
    at: datetime
    accounts: list[str]
    currencies: list[str]
    amounts: list[int]
    foldeds: list[bool]


@dataclass(frozen=True)
class Appended:
    """The CTEs of one transaction (`transaction`, returning its id) and its postings
    (`postings`, returning their transaction's id), in another domain's statement."""

    transaction: CTE
    postings: CTE
    binds: Binds[NewTransaction]

    def values(self, transaction: NewTransaction) -> dict[str, Any]:
        return self.binds.values(transaction)


def appended(source: FromClause | None) -> Appended:
    """One transaction and its postings, written once per row of `source`, a FROM item of
    the caller's statement (None: once; a `source` without rows, an idempotent replay:
    nothing). Another domain's statement takes them to record the fact a transaction
    follows from (a payment's row) and its money in one round trip."""
    binds = Binds(
        NewTransaction,
        kind=Text(),
        reference=Text(),
        livemode=Boolean(),
        at=DateTime(timezone=True),
        accounts=ARRAY(Text()),
        currencies=ARRAY(Text()),
        amounts=ARRAY(BigInteger()),
        foldeds=ARRAY(Boolean()),
    )
    row = select(binds["kind"], binds["reference"], binds["livemode"], binds["at"])
    if source is not None:
        row = row.select_from(source)
    transaction = (
        insert(_TRANSACTIONS)
        .from_select(["kind", "reference", "livemode", "created_at"], row)
        .returning(_TRANSACTIONS.c.id, _TRANSACTIONS.c.created_at)
        .cte()
    )
    columns = ("account", "currency", "amount", "folded")
    p = (
        func.unnest(binds["accounts"], binds["currencies"], binds["amounts"], binds["foldeds"])
        .table_valued(*columns)
        .render_derived("p")
    )
    postings = (
        insert(_POSTINGS)
        .from_select(
            # At the transaction's instant: its postings are in its month's partition.
            ["transaction_id", "created_at", *columns],
            select(
                transaction.c.id, transaction.c.created_at, *(p.c[column] for column in columns)
            ).join_from(transaction, p, true()),
        )
        .returning(_POSTINGS.c.transaction_id)
        .cte()
    )
    return Appended(transaction, postings, binds)


def _first_transaction(postings: CTE) -> Select[int]:
    return select(postings.c.transaction_id).limit(1)


_APPENDED = appended(None)
_APPEND = _first_transaction(_APPENDED.postings)

# The SQLSTATE of a statement failed by a guarded debit its source does not cover
# (`debited`): nothing that statement wrote stays.
NOT_COVERED = "C0402"


@dataclass(frozen=True)
class Heads:
    """The guarded accounts a transaction debits, in code order, and their net debits;
    `refuse`: an uncovered debit fails the statement (`NOT_COVERED`)."""

    codes: list[str]
    currencies: list[str]
    livemodes: list[bool]
    debits: list[int]
    refuse: bool


@dataclass(frozen=True)
class Debit:
    """What `debited` writes: the guarded debits, then, when covered, the transaction."""

    heads: Heads
    transaction: NewTransaction


@dataclass(frozen=True)
class Debited:
    """The CTE of the call (`call`, its column `d`: whether the heads were debited, and
    their balances before it), then the transaction and its postings (`appended`)."""

    call: CTE
    appended: Appended
    binds: Binds[Heads]

    @property
    def debited(self) -> ColumnElement[bool]:
        return _was_debited(self.call)

    @property
    def balances(self) -> ColumnElement[list[int]]:
        return func.balances(self.call.c.d, type_=ARRAY(BigInteger()))

    def values(self, debit: Debit) -> dict[str, Any]:
        return self.binds.values(debit.heads) | self.appended.values(debit.transaction)


def debited(source: FromClause | None) -> Debited:
    """The guarded debits of a `Debit` by the server-side `ledger_debit` (it locks the heads
    in code order, folds their unfolded postings, checks that each covers its debit and
    debits them, each step on a snapshot taken after the lock), then, when covered, the
    transaction and its postings (`appended`); once per row of `source` (see `appended`).
    The lock is held from that call to the statement's commit: run outside a transaction,
    for the statement alone. The call is in a target list, so that it runs once per row of
    `source` and never when there is none."""
    binds = Binds(
        Heads,
        codes=ARRAY(Text()),
        currencies=ARRAY(Text()),
        livemodes=ARRAY(Boolean()),
        debits=ARRAY(BigInteger()),
        refuse=Boolean(),
    )
    call = select(
        func.ledger_debit(
            binds["codes"],
            binds["currencies"],
            binds["livemodes"],
            binds["debits"],
            binds["refuse"],
        ).label("d")
    )
    if source is not None:
        call = call.select_from(source)
    called = call.cte()
    gate = select(literal_column("1")).select_from(called).where(_was_debited(called)).cte()
    return Debited(called, appended(gate), binds)


def _was_debited(call: CTE) -> ColumnElement[bool]:
    # PostgreSQL's functional notation for the field `(d).debited` of the call's record.
    return func.debited(call.c.d, type_=Boolean())


# Whether the heads were debited, their balances before the debit (in the order of the
# codes) and the transaction's id (None: not covered).
_DEBITED = debited(None)
_DEBIT_APPEND = select(
    _DEBITED.debited,
    _DEBITED.balances,
    _first_transaction(_DEBITED.appended.postings).scalar_subquery(),
).select_from(_DEBITED.call)


def _transaction(
    kind: str, reference: str | None, entries: Sequence[Entry], at: datetime, folded: set[Account]
) -> NewTransaction:
    return NewTransaction(
        kind=kind,
        reference=reference,
        livemode=entries[0].account.livemode,
        at=at,
        accounts=[e.account.code for e in entries],
        currencies=[e.account.currency for e in entries],
        amounts=[e.amount for e in entries],
        foldeds=[e.account in folded for e in entries],
    )


def appendable(
    *, kind: str, reference: str | None, entries: Sequence[Entry], at: datetime
) -> NewTransaction:
    """The values of `appended` for a balanced transaction that debits no guarded
    account. A guarded debit locks and folds its account first (`transfer`); it cannot be
    appended blindly, so it is refused here (`LedgerError`)."""
    _check_balanced(entries)
    if _guarded_debits(entries):
        raise LedgerError("a debit of a guarded account is locked first: transfer, debitable")
    return _transaction(kind, reference, entries, at, set())


def _check_balanced(entries: Sequence[Entry]) -> None:
    if not entries:
        raise Unbalanced("a transaction needs postings")
    totals: dict[str, int] = defaultdict(int)
    for entry in entries:
        if entry.amount == 0:
            raise Unbalanced(f"zero posting on {entry.account.code}")
        totals[entry.account.currency] += entry.amount
    if any(totals.values()):
        raise Unbalanced(f"postings do not sum to zero: {dict(totals)}")
    if len({entry.account.livemode for entry in entries}) != 1:
        raise Unbalanced("a transaction never mixes environments")


async def transfer(
    session: AsyncSession,
    *,
    kind: str,
    reference: str | None,
    entries: Sequence[Entry],
    at: datetime,
) -> int:
    """Records one balanced transaction; returns its id. Raises Overdraft if a guarded
    account cannot cover its debit: then no transaction or posting is written (at most
    credits were folded, which leaves every balance as it was) and the caller may roll back
    or carry on."""
    _check_balanced(entries)
    debits = _guarded_debits(entries)
    transaction = _transaction(kind, reference, entries, at, set(debits))
    if not debits:
        result = await session.execute(_APPEND, _APPENDED.values(transaction))
        return int(result.scalars().first() or 0)
    heads = _heads(debits, refuse=False)
    debited, balances, transaction_id = (
        await session.execute(_DEBIT_APPEND, _DEBITED.values(Debit(heads, transaction)))
    ).one()
    if not debited:
        before = dict(zip(heads.codes, balances, strict=True))
        short = next(a for a in sorted(debits) if before[a.code] + debits[a] < 0)
        raise Overdraft(short, before[short.code], -debits[short])
    return int(transaction_id)


def debitable(*, kind: str, reference: str | None, entries: Sequence[Entry], at: datetime) -> Debit:
    """The values of `debited` for a balanced transaction that debits a guarded
    account: an uncovered debit fails the whole statement (`NOT_COVERED`)."""
    _check_balanced(entries)
    debits = _guarded_debits(entries)
    if not debits:
        raise LedgerError("no guarded account is debited: append it (appendable)")
    return Debit(
        _heads(debits, refuse=True), _transaction(kind, reference, entries, at, set(debits))
    )


def _guarded_debits(entries: Sequence[Entry]) -> dict[Account, int]:
    net = _net(entries)
    return {account: amount for account, amount in net.items() if amount < 0 and account.guarded}


def _net(entries: Sequence[Entry]) -> dict[Account, int]:
    net: dict[Account, int] = defaultdict(int)
    for entry in entries:
        net[entry.account] += entry.amount
    return net


def _heads(debits: dict[Account, int], *, refuse: bool) -> Heads:
    accounts = sorted(debits)
    return Heads(
        codes=[a.code for a in accounts],
        currencies=[a.currency for a in accounts],
        livemodes=[a.livemode for a in accounts],
        debits=[debits[a] for a in accounts],
        refuse=refuse,
    )


_BALANCES = text(
    "SELECT c.code, coalesce(a.balance, 0) + coalesce(("
    "  SELECT sum(p.amount) FROM ledger_postings p WHERE p.account = c.code AND NOT p.folded"
    "), 0) FROM unnest(CAST(:codes AS text[])) AS c(code) "
    "LEFT JOIN ledger_accounts a ON a.code = c.code"
)


async def balances(session: AsyncSession, accounts: Sequence[Account]) -> dict[Account, int]:
    """Current balances, counting credits not yet folded; locks nothing."""
    result = await session.execute(_BALANCES, {"codes": [a.code for a in accounts]})
    rows: dict[str, int] = {code: total for code, total in result}
    return {account: int(rows.get(account.code, 0)) for account in accounts}


async def balance(session: AsyncSession, account: Account) -> int:
    return (await balances(session, [account]))[account]


# The sum of an account's postings below a transaction id: counted up from the first one, or
# down from the balance (its head and its credits not yet folded, in the same snapshot) when
# the id is nearer the end of the ledger than its start.
_BELOW = text(
    "SELECT coalesce(sum(amount), 0) FROM ("
    "  SELECT amount FROM ledger_postings WHERE account = :code AND transaction_id < :below "
    "  UNION ALL SELECT amount FROM ledger_archived WHERE account = :code"
    ") AS every"
)
_BELOW_FROM_THE_END = text(
    "SELECT coalesce((SELECT balance FROM ledger_accounts WHERE code = :code), 0)"
    " + coalesce((SELECT sum(amount) FROM ledger_postings WHERE account = :code AND NOT folded), 0)"
    " - coalesce((SELECT sum(amount) FROM ledger_postings"
    "   WHERE account = :code AND transaction_id >= :below), 0)"
)
_ENDS = text("SELECT min(id), max(id) FROM ledger_transactions")


async def posted_below(session: AsyncSession, account: Account, transaction_id: int) -> int:
    """What `account`'s postings of the transactions before `transaction_id` add up to (a
    statement's opening): read from whichever end of the ledger is nearer."""
    first, last = (await session.execute(_ENDS)).one()
    nearer_the_end = first is not None and last - transaction_id < transaction_id - first
    statement = _BELOW_FROM_THE_END if nearer_the_end else _BELOW
    return int(await session.scalar(statement, {"code": account.code, "below": transaction_id}))
