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
_FOLD = text(
    "WITH folded AS (UPDATE ledger_postings SET folded = true "
    "WHERE account = ANY(CAST(:codes AS text[])) AND NOT folded RETURNING account, amount), "
    "sums AS (SELECT account, sum(amount) AS delta FROM folded GROUP BY account) "
    "UPDATE ledger_accounts a SET balance = a.balance + sums.delta FROM sums "
    "WHERE a.code = sums.account RETURNING a.code, a.balance"
)
_DEBIT_HEAD = text(
    "UPDATE ledger_accounts a SET balance = a.balance + d.amount "
    "FROM unnest(CAST(:codes AS text[]), CAST(:amounts AS bigint[])) AS d(code, amount) "
    "WHERE a.code = d.code"
)
_APPEND = text(
    "WITH tx AS (INSERT INTO ledger_transactions (kind, reference, livemode, created_at) "
    "VALUES (:kind, :reference, :livemode, :created_at) RETURNING id) "
    "INSERT INTO ledger_postings (transaction_id, account, currency, amount, folded) "
    "SELECT tx.id, p.account, p.currency, p.amount, p.folded FROM tx, "
    "unnest(CAST(:accounts AS text[]), CAST(:currencies AS text[]), CAST(:amounts AS bigint[]), "
    "CAST(:foldeds AS boolean[])) AS p(account, currency, amount, folded) "
    "RETURNING transaction_id"
)


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
    net: dict[Account, int] = defaultdict(int)
    for entry in entries:
        net[entry.account] += entry.amount
    debits = {account: amount for account, amount in net.items() if amount < 0 and account.guarded}
    if debits:
        await _debit(session, debits)
    result = await session.execute(
        _APPEND,
        {
            "kind": kind,
            "reference": reference,
            "livemode": entries[0].account.livemode,
            "created_at": at,
            "accounts": [e.account.code for e in entries],
            "currencies": [e.account.currency for e in entries],
            "amounts": [e.amount for e in entries],
            "foldeds": [e.account in debits for e in entries],
        },
    )
    return int(result.scalars().first() or 0)


async def _debit(session: AsyncSession, debits: dict[Account, int]) -> None:
    accounts = sorted(debits)
    codes = [account.code for account in accounts]
    await session.execute(
        _ENSURE_ACCOUNTS,
        {
            "codes": codes,
            "currencies": [a.currency for a in accounts],
            "livemodes": [a.livemode for a in accounts],
        },
    )
    locked = await session.execute(_LOCK_ACCOUNTS, {"codes": codes})
    balances: dict[str, int] = {code: balance for code, balance in locked}
    folded = await session.execute(_FOLD, {"codes": codes})
    balances.update({code: balance for code, balance in folded})
    for account in accounts:
        if balances[account.code] + debits[account] < 0:
            raise Overdraft(account, balances[account.code], -debits[account])
    await session.execute(_DEBIT_HEAD, {"codes": codes, "amounts": [debits[a] for a in accounts]})


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
