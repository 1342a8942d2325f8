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
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit import cte
from cauri.ledger.accounts import Account


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


def append_after(source: str | None) -> str:
    """The CTEs `tx` and `postings`: one transaction and its postings, from the parameters
    `appendable` (or `transfer`) gives, once per row of `source` (cauri.kit.cte). Another
    domain's statement takes them to record the fact a transaction follows from (a payment's
    row) and its money in one round trip."""
    return (
        "tx AS (INSERT INTO ledger_transactions (kind, reference, livemode, created_at) "  # noqa: S608
        "SELECT CAST(:ledger_kind AS text), CAST(:ledger_reference AS text), "
        "CAST(:ledger_livemode AS boolean), CAST(:ledger_at AS timestamptz)"
        + cte.per_row_of(source)
        + " RETURNING id), "
        "postings AS (INSERT INTO ledger_postings (transaction_id, account, currency, amount, "
        "folded) SELECT tx.id, p.account, p.currency, p.amount, p.folded FROM tx, "
        "unnest(CAST(:ledger_accounts AS text[]), CAST(:ledger_currencies AS text[]), "
        "CAST(:ledger_amounts AS bigint[]), CAST(:ledger_foldeds AS boolean[])) "
        "AS p(account, currency, amount, folded) RETURNING transaction_id)"
    )


_APPEND = text(f"WITH {append_after(None)} SELECT transaction_id FROM postings LIMIT 1")  # noqa: S608

# The SQLSTATE of a statement failed by a guarded debit its source does not cover
# (`debit_after`): nothing that statement wrote stays.
NOT_COVERED = "C0402"


def debit_after(source: str | None) -> str:
    """The CTEs `debit`, `gate`, `tx` and `postings`: the guarded debits of the parameters
    `debitable` (or `transfer`) gives, by the server-side `ledger_debit` (it locks the
    heads in code order, folds their unfolded postings, checks that each covers its debit
    and debits them, each step on a snapshot taken after the lock), then, when covered,
    the transaction and its postings (`append_after`); once per row of `source`
    (cauri.kit.cte). The lock is held from that call to the statement's commit: run outside a
    transaction, for the statement alone. The call is in a target list, so that it runs once
    per row of `source` and never when there is none."""
    return (
        "debit AS (SELECT ledger_debit(CAST(:ledger_heads AS text[]), "  # noqa: S608
        "CAST(:ledger_head_currencies AS text[]), CAST(:ledger_head_livemodes AS boolean[]), "
        "CAST(:ledger_debits AS bigint[]), CAST(:ledger_refuse AS boolean)) AS d"
        + cte.per_row_of(source)
        + "), gate AS (SELECT 1 FROM debit WHERE (d).debited), "
        + append_after("gate")
    )


# Returns whether the heads were debited, their balances before the debit (in the order of
# the codes) and the transaction's id (None: not covered).
_DEBIT_APPEND = text(
    f"WITH {debit_after(None)} "  # noqa: S608
    "SELECT (d).debited, (d).balances, (SELECT transaction_id FROM postings LIMIT 1) FROM debit"
)


def _parameters(
    kind: str, reference: str | None, entries: Sequence[Entry], at: datetime, folded: set[Account]
) -> dict[str, Any]:
    return {
        "ledger_kind": kind,
        "ledger_reference": reference,
        "ledger_livemode": entries[0].account.livemode,
        "ledger_at": at,
        "ledger_accounts": [e.account.code for e in entries],
        "ledger_currencies": [e.account.currency for e in entries],
        "ledger_amounts": [e.amount for e in entries],
        "ledger_foldeds": [e.account in folded for e in entries],
    }


def appendable(
    *, kind: str, reference: str | None, entries: Sequence[Entry], at: datetime
) -> dict[str, Any]:
    """The parameters of `append_after` for a balanced transaction that debits no guarded
    account. A guarded debit locks and folds its account first (`transfer`); it cannot be
    appended blindly, so it is refused here (`LedgerError`)."""
    _check_balanced(entries)
    if _guarded_debits(entries):
        raise LedgerError("a debit of a guarded account is locked first: transfer, debitable")
    return _parameters(kind, reference, entries, at, set())


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
    parameters = _parameters(kind, reference, entries, at, set(debits))
    if not debits:
        result = await session.execute(_APPEND, parameters)
        return int(result.scalars().first() or 0)
    heads = _heads(debits, refuse=False)
    debited, balances, transaction_id = (
        await session.execute(_DEBIT_APPEND, parameters | heads)
    ).one()
    if not debited:
        before = dict(zip(heads["ledger_heads"], balances, strict=True))
        short = next(a for a in sorted(debits) if before[a.code] + debits[a] < 0)
        raise Overdraft(short, before[short.code], -debits[short])
    return int(transaction_id)


def debitable(
    *, kind: str, reference: str | None, entries: Sequence[Entry], at: datetime
) -> dict[str, Any]:
    """The parameters of `debit_after` for a balanced transaction that debits a guarded
    account: an uncovered debit fails the whole statement (`NOT_COVERED`)."""
    _check_balanced(entries)
    debits = _guarded_debits(entries)
    if not debits:
        raise LedgerError("no guarded account is debited: append it (appendable)")
    return _parameters(kind, reference, entries, at, set(debits)) | _heads(debits, refuse=True)


def _guarded_debits(entries: Sequence[Entry]) -> dict[Account, int]:
    net = _net(entries)
    return {account: amount for account, amount in net.items() if amount < 0 and account.guarded}


def _net(entries: Sequence[Entry]) -> dict[Account, int]:
    net: dict[Account, int] = defaultdict(int)
    for entry in entries:
        net[entry.account] += entry.amount
    return net


def _heads(debits: dict[Account, int], *, refuse: bool) -> dict[str, Any]:
    """The parameters of `debit_after`'s call, the heads in code order."""
    accounts = sorted(debits)
    return {
        "ledger_heads": [a.code for a in accounts],
        "ledger_head_currencies": [a.currency for a in accounts],
        "ledger_head_livemodes": [a.livemode for a in accounts],
        "ledger_debits": [debits[a] for a in accounts],
        "ledger_refuse": refuse,
    }


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
    "SELECT coalesce(sum(amount), 0) FROM ledger_postings "
    "WHERE account = :code AND transaction_id < :below"
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
