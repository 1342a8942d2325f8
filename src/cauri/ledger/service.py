"""The only code that moves money: balanced transactions of appended postings.

A credit appends a posting and locks nothing. A debit of a guarded account locks that
account's row (several in code order, so two debits never deadlock), folds the postings not
yet folded into the cached balance, refuses an overdraft, and appends its posting already
folded (DESIGN invariant 3). A debit of any other account (platform revenue, external) is
appended like a credit: those rows are never locked, their postings never folded.

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


# Only guarded accounts have a head row, and none of them may go negative.
_ENSURE_ACCOUNTS = text(
    "INSERT INTO ledger_accounts (code, currency, livemode, allow_negative) "
    "SELECT *, false FROM unnest(CAST(:codes AS text[]), CAST(:currencies AS text[]), "
    "CAST(:livemodes AS boolean[])) "
    "ON CONFLICT (code) DO NOTHING"
)
# COLLATE "C": rows are locked in the same byte order as the accounts are sorted in Python.
_LOCK_ACCOUNTS = text(
    "SELECT code, balance FROM ledger_accounts WHERE code = ANY(CAST(:codes AS text[])) "
    'ORDER BY code COLLATE "C" FOR UPDATE'
)


def append_after(source: str | None) -> str:
    """The CTEs `tx` and `postings`: one transaction and its postings, from the parameters
    `appendable` (or `transfer`) gives, written once per row of `source`, a CTE of the
    caller's statement (None: once). Another domain's statement takes them to record the
    fact a transaction follows from (a payment's row) and its money in one round trip: when
    `source` holds no row (an idempotent replay), nothing is written. Every parameter is
    cast: in an INSERT ... SELECT, PostgreSQL does not infer them. Constant text (S608):
    `source` is a CTE's name, never input."""
    return (
        "tx AS (INSERT INTO ledger_transactions (kind, reference, livemode, created_at) "  # noqa: S608
        "SELECT CAST(:ledger_kind AS text), CAST(:ledger_reference AS text), "
        "CAST(:ledger_livemode AS boolean), CAST(:ledger_at AS timestamptz)"
        + (f" FROM {source}" if source else "")
        + " RETURNING id), "
        "postings AS (INSERT INTO ledger_postings (transaction_id, account, currency, amount, "
        "folded) SELECT tx.id, p.account, p.currency, p.amount, p.folded FROM tx, "
        "unnest(CAST(:ledger_accounts AS text[]), CAST(:ledger_currencies AS text[]), "
        "CAST(:ledger_amounts AS bigint[]), CAST(:ledger_foldeds AS boolean[])) "
        "AS p(account, currency, amount, folded) RETURNING transaction_id)"
    )


_APPEND = text(f"WITH {append_after(None)} SELECT transaction_id FROM postings LIMIT 1")  # noqa: S608

# Under the locks `_LOCK_ACCOUNTS` took, so its snapshot holds every committed posting: fold
# the accounts' unfolded postings, then, if every folded balance covers its debit, debit the
# heads and append the transaction (its postings to the debited accounts already folded).
# One UPDATE per head row: a row updated twice in one statement keeps only one change, so
# the fold and the debit are one assignment. Not covered: the fold is kept (the balance is
# unchanged), nothing is debited or appended. Returns each head's balance before the debit
# and the transaction's id (None: not covered). `debited` runs unreferenced, as every
# data-modifying CTE does.
_FOLD_DEBIT_APPEND = text(
    "WITH folded AS (UPDATE ledger_postings SET folded = true "  # noqa: S608
    "WHERE account = ANY(CAST(:codes AS text[])) AND NOT folded RETURNING account, amount), "
    "sums AS (SELECT account, sum(amount) AS delta FROM folded GROUP BY account), "
    "heads AS (SELECT a.code, a.balance + coalesce(s.delta, 0) AS balance, d.amount "
    "FROM unnest(CAST(:codes AS text[]), CAST(:amounts AS bigint[])) AS d(code, amount) "
    "JOIN ledger_accounts a ON a.code = d.code LEFT JOIN sums s ON s.account = d.code), "
    # Every head found, none short: a missing head must not pass as covered.
    "covered AS (SELECT bool_and(balance + amount >= 0) "
    "AND count(*) = cardinality(CAST(:codes AS text[])) AS ok FROM heads), "
    "debited AS (UPDATE ledger_accounts a "
    "SET balance = h.balance + CASE WHEN c.ok THEN h.amount ELSE 0 END "
    "FROM heads h, covered c WHERE a.code = h.code RETURNING a.code), "
    "gate AS (SELECT 1 FROM covered WHERE ok), "
    f"{append_after('gate')} "
    "SELECT h.code, h.balance, (SELECT transaction_id FROM postings LIMIT 1) FROM heads h"
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
    if any(amount < 0 and account.guarded for account, amount in _net(entries).items()):
        raise LedgerError("a debit of a guarded account goes through transfer()")
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
    net = _net(entries)
    debits = {account: amount for account, amount in net.items() if amount < 0 and account.guarded}
    parameters = _parameters(kind, reference, entries, at, set(debits))
    if debits:
        return await _debit_and_append(session, debits, parameters)
    result = await session.execute(_APPEND, parameters)
    return int(result.scalars().first() or 0)


def _net(entries: Sequence[Entry]) -> dict[Account, int]:
    net: dict[Account, int] = defaultdict(int)
    for entry in entries:
        net[entry.account] += entry.amount
    return net


async def _debit_and_append(
    session: AsyncSession, debits: dict[Account, int], parameters: dict[str, Any]
) -> int:
    """Two round trips under the lock: the lock, then the fold, debit and append."""
    accounts = sorted(debits)
    codes = [account.code for account in accounts]
    if len(accounts) > 1:
        # Several heads are all made before any is locked, so that they are locked in code
        # order (no deadlock between two debits); one head is made only when missing.
        await _ensure_heads(session, accounts)
    locked = (await session.execute(_LOCK_ACCOUNTS, {"codes": codes})).all()
    if len(locked) < len(codes):
        await _ensure_heads(session, accounts)
        await session.execute(_LOCK_ACCOUNTS, {"codes": codes})
    result = await session.execute(
        _FOLD_DEBIT_APPEND,
        {**parameters, "codes": codes, "amounts": [debits[a] for a in accounts]},
    )
    rows = result.all()
    transaction_id = rows[0][2]
    if transaction_id is None:
        balances: dict[str, int] = {code: int(balance) for code, balance, _ in rows}
        short = next(a for a in accounts if balances[a.code] + debits[a] < 0)
        raise Overdraft(short, balances[short.code], -debits[short])
    return int(transaction_id)


async def _ensure_heads(session: AsyncSession, accounts: Sequence[Account]) -> None:
    await session.execute(
        _ENSURE_ACCOUNTS,
        {
            "codes": [a.code for a in accounts],
            "currencies": [a.currency for a in accounts],
            "livemodes": [a.livemode for a in accounts],
        },
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
