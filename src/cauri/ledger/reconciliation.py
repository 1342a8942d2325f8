"""The ledger checked whole (DESIGN invariants 2 and 3), and every account's balance.

Three invariants, each one aggregate statement over all the postings (set-based: a hash
aggregate per statement, whatever their number; no row is fetched but the discrepancies):
- `unbalanced`: every transaction's postings sum to zero in each currency;
- `stale_head`: a guarded account's head (`ledger_accounts.balance`, what debits fold into)
  holds the sum of its folded postings (its credits not folded yet are outside it by design);
  the postings of archived months count by what they carried forward (`ledger_archived`);
- `negative`: no account but an external one (operator clearing and wallets, top-up
  sources, the platform's bank, what merchants owe, which mirror money outside Cauri) or an
  expense is below zero: merchants' balances, plans' escrows, platform revenue.
Each statement reads one snapshot, in which every committed transaction left the invariant
true: a check run while money moves finds no false discrepancy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Text, TextClause, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from cauri.ledger import accounts

UNBALANCED = "unbalanced"
STALE_HEAD = "stale_head"
NEGATIVE = "negative"

# Each check: its discrepancies as (subject, currency, found, expected), the first :limit of
# them in a stable order, each row with how many there are in all (the window is counted
# before the limit applies).
_CHECKS: dict[str, TextClause] = {
    UNBALANCED: text(
        "SELECT count(*) OVER (), CAST(transaction_id AS text), currency, sum(amount), 0 "
        "FROM ledger_postings GROUP BY transaction_id, currency HAVING sum(amount) <> 0 "
        "ORDER BY transaction_id, currency LIMIT :limit"
    ),
    STALE_HEAD: text(
        "WITH folded AS (SELECT account, sum(amount) AS total FROM ("
        "  SELECT account, amount FROM ledger_postings WHERE folded "
        "  UNION ALL SELECT account, amount FROM ledger_archived"
        ") AS every GROUP BY account) "
        "SELECT count(*) OVER (), a.code, a.currency, a.balance, coalesce(f.total, 0) "
        "FROM ledger_accounts a LEFT JOIN folded f ON f.account = a.code "
        "WHERE a.balance <> coalesce(f.total, 0) ORDER BY a.code LIMIT :limit"
    ),
    NEGATIVE: text(
        "SELECT count(*) OVER (), account, currency, sum(amount), 0 FROM ("
        "  SELECT account, currency, amount FROM ledger_postings "
        "  UNION ALL SELECT account, currency, amount FROM ledger_archived) AS every "
        "WHERE NOT account LIKE ANY (:may_be_negative) "
        "GROUP BY account, currency HAVING sum(amount) < 0 ORDER BY account LIMIT :limit"
    ).bindparams(bindparam("may_be_negative", list(accounts.MAY_BE_NEGATIVE), ARRAY(Text()))),
}
_COVERED = text(
    "SELECT (SELECT count(*) FROM ledger_transactions), (SELECT count(*) FROM ledger_postings), "
    "(SELECT count(*) FROM ledger_accounts)"
)


@dataclass(frozen=True)
class Discrepancy:
    """`subject`: a transaction id (unbalanced) or an account code. `found` against
    `expected`: the transaction's sum against 0, the head against its folded postings, the
    balance against 0 (at least)."""

    check: str
    subject: str
    currency: str
    found: int
    expected: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Findings:
    transactions: int
    postings: int
    accounts: int  # the account heads compared with their postings
    counts: dict[str, int]  # per check, in all
    first: Sequence[Discrepancy]  # at most `limit` per check

    @property
    def passed(self) -> bool:
        return not any(self.counts.values())


async def check(connection: AsyncSession | AsyncConnection, limit: int = 20) -> Findings:
    """Runs the three checks; nothing is written."""
    counts: dict[str, int] = {}
    first: list[Discrepancy] = []
    for name, statement in _CHECKS.items():
        rows = (await connection.execute(statement, {"limit": limit})).all()
        counts[name] = int(rows[0][0]) if rows else 0
        first.extend(
            Discrepancy(name, subject, currency, int(found), int(expected))
            for _, subject, currency, found, expected in rows
        )
    transactions, postings, covered = (await connection.execute(_COVERED)).one()
    return Findings(int(transactions), int(postings), int(covered), counts, first)


# Every account's balance as the ledger reads it (its head plus its postings not folded yet;
# the other kinds than guarded have no head and never fold). Plans' escrows are summed per
# merchant, environment and currency: one account per plan would be one line per plan.
_BALANCES = text(
    "WITH amounts AS ("
    "  SELECT code AS account, currency, balance AS amount FROM ledger_accounts "
    "  UNION ALL SELECT account, currency, amount FROM ledger_postings WHERE NOT folded"
    ") SELECT regexp_replace(account, ':plan:[^:]+:escrow:', ':escrow:') AS shown, currency, "
    "  sum(amount), count(DISTINCT account) "
    "FROM amounts GROUP BY shown, currency ORDER BY shown, currency"
)


@dataclass(frozen=True)
class AccountBalance:
    """One account, or (kind `escrow`) all the escrows of a merchant's plans in one
    environment and currency. `owner`: the merchant's id, the operator's code, the
    connector account's name, or `platform`. `kind`: available, escrow, receivable, fees,
    plan_fees, penalties, topups, clearing, wallet, bank, operator_costs, suspense."""

    code: str
    kind: str
    owner: str
    livemode: bool
    currency: str
    balance: int
    accounts: int


def _described(shown: str, currency: str, total: int, count: int) -> AccountBalance:
    # Codes end with `:{environment}:{currency}` (cauri.ledger.accounts).
    head, environment, _ = shown.rsplit(":", 2)
    owner_kind, _, rest = head.partition(":")
    if owner_kind == "merchant":
        owner, _, kind = rest.rpartition(":")
    elif owner_kind in ("operator", "connector"):
        owner, _, kind = rest.partition(":")
    else:
        owner, kind = owner_kind, rest
    return AccountBalance(
        shown, kind, owner, environment == accounts.environment(True), currency, total, count
    )


async def account_balances(session: AsyncSession) -> list[AccountBalance]:
    """By code (so a merchant's accounts are together)."""
    rows = await session.execute(_BALANCES)
    return [_described(shown, currency, int(sum_), int(n)) for shown, currency, sum_, n in rows]
