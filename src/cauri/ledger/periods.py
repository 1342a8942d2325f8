"""The period close (migration 0042): before a month of postings may leave the database
(`cauri archive`), its postings are all folded into account heads and what every account's
postings add up to at the month's end is carried forward, so that balances and the ledger's
checks still hold without them.

A month closes once it has been over for CLOSE_AFTER (its operators' statements are in: a
statement imported later that books a movement in a closed month is refused), in the order
of the postings' partitions (the legacy partition, everything before migration 0041, closes
whole, as the month before its end); `close_through` closes every month not closed yet up
to the one asked:

1. Each partition of those months refuses new postings (a `BEFORE INSERT` trigger: a
   back-dated transaction would change what is carried). It waits for the writes running
   into it, and costs nothing to the writes of the open months.
2. Every account with a posting not folded in those months is folded, one account a
   transaction, by the debit's own `ledger_debit` (it locks the head in code order, folds,
   debits 0): the credit-only kinds (revenue, external, expense), never folded until now,
   get a head there (may be negative where their kind may be, accounts.MAY_BE_NEGATIVE).
   A balance (a head plus its postings not folded) is the same before and after.
3. In one transaction, a period row a month and its carried amounts, each the previous
   archived month's carried amount plus the postings up to the month's end.

The view `ledger_archived` (migration 0042) holds the latest archived month's carried
amounts: what the postings no longer in the database add up to, per account. Every read that
sums postings (the ledger's checks, statements' openings, receivables, wallets) adds it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Text, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cauri.kit.db import unit_of_work
from cauri.kit.errors import Conflict, InvalidRequest
from cauri.kit.months import Month
from cauri.kit.partitions import Partition, partitions
from cauri.ledger import accounts

POSTINGS = "ledger_postings"
# The reconciliation books an operator's movements at their own instant, a day or two late
# (the daily run of day D at 03:00 the day after, again the day after that, in the
# platform's time zone): a month closes once those are in.
CLOSE_AFTER = timedelta(days=7)

_CLOSED_MONTHS = text("SELECT month FROM ledger_periods ORDER BY month")
_IN_DEFAULT = text("SELECT EXISTS (SELECT FROM ledger_postings_default WHERE created_at < :end)")
_UNFOLDED = text(
    "SELECT DISTINCT account, currency FROM ledger_postings "
    "WHERE NOT folded AND created_at < :end ORDER BY account"
)
_HEAD = text(
    "INSERT INTO ledger_accounts (code, currency, livemode, allow_negative) "
    "VALUES (:code, :currency, :livemode, CAST(:code AS varchar) LIKE ANY (:may_be_negative)) "
    "ON CONFLICT (code) DO NOTHING"
).bindparams(bindparam("may_be_negative", list(accounts.MAY_BE_NEGATIVE), ARRAY(Text())))
_FOLD = text(
    "SELECT debited FROM ledger_debit(ARRAY[CAST(:code AS text)], "
    "ARRAY[CAST(:currency AS text)], ARRAY[CAST(:livemode AS boolean)], "
    "ARRAY[CAST(0 AS bigint)], false)"
)
_PERIOD = text(
    "INSERT INTO ledger_periods (month, closed_at) VALUES (:month, :now) "
    "ON CONFLICT (month) DO NOTHING RETURNING month"
)
_CARRIED = text(
    "INSERT INTO ledger_carried (month, account, currency, amount) "
    "SELECT :month, account, min(currency), sum(amount) FROM ("
    "  SELECT account, currency, amount FROM ledger_postings WHERE created_at < :end "
    "  UNION ALL SELECT account, currency, amount FROM ledger_archived"
    ") AS every GROUP BY account"
)


@dataclass(frozen=True)
class Closed:
    months: list[Month]  # closed now, in order (none: all were closed already)
    folded: int  # accounts folded


def _frozen(partition: str) -> str:
    return (
        f'CREATE OR REPLACE TRIGGER ledger_postings_closed BEFORE INSERT ON "{partition}" '
        "FOR EACH ROW EXECUTE FUNCTION ledger_month_closed()"
    )


async def closed_months(session: AsyncSession) -> list[Month]:
    return [Month.of(day) for day in (await session.scalars(_CLOSED_MONTHS)).all()]


_ARCHIVED_THROUGH = text("SELECT max(month) FROM ledger_periods WHERE archived_at IS NOT NULL")
_CARRIED_OF = text("SELECT coalesce(sum(amount), 0) FROM ledger_archived WHERE account = :code")


async def archived_through(session: AsyncSession) -> Month | None:
    """The last month whose postings left the database, if any."""
    day = await session.scalar(_ARCHIVED_THROUGH)
    return None if day is None else Month.of(day)


async def carried(session: AsyncSession, code: str) -> int:
    """What `code`'s postings no longer in the database add up to."""
    return int(await session.scalar(_CARRIED_OF, {"code": code}) or 0)


async def close_through(
    sessionmaker: async_sessionmaker[AsyncSession], month: Month, now: datetime
) -> Closed:
    """Every month not closed yet up to `month`, closed (the steps above); again: nothing."""
    if month.end + CLOSE_AFTER > now:
        raise Conflict(f"{month} n'est pas terminé depuis {CLOSE_AFTER.days} jour(s).")
    async with unit_of_work(sessionmaker) as session:
        existing = await partitions(session, POSTINGS)
        to_close = await _months_to_close(session, existing, month)
        for partition in existing:
            if partition.end is not None and period_of(partition.end) in to_close:
                await session.execute(text(_frozen(partition.name)))
    if not to_close:
        return Closed([], 0)
    folded = await _fold_before(sessionmaker, month.end)
    async with unit_of_work(sessionmaker) as session:
        done = [m for m in to_close if await _carry(session, m, now)]
    return Closed(done, folded)


def period_of(end: datetime) -> Month:
    """The month a partition ending at `end` closes as (the legacy one: the month before)."""
    return Month.of(end).plus(-1)


async def _months_to_close(
    session: AsyncSession, existing: Sequence[Partition], month: Month
) -> list[Month]:
    """The months whose end is one of the postings' partitions' ends, not closed yet, up to
    `month`, whose end must be one (the legacy partition closes whole)."""
    ends = sorted({p.end for p in existing if p.end is not None})
    if month.end not in ends:
        first = period_of(ends[0]) if ends else month
        raise InvalidRequest.field(
            "month",
            f"{month} ne se clôt pas seul : le premier mois à clore est {first} "
            "(tout ce qui précède la migration 0041 se clôt d'un bloc).",
        )
    if await session.scalar(_IN_DEFAULT, {"end": month.end}):
        raise Conflict(
            f"Des écritures antérieures à la fin de {month} sont dans la partition par défaut "
            "de ledger_postings : à déplacer d'abord (docs/SCALING.md §3d)."
        )
    closed = set(await closed_months(session))
    return [period_of(end) for end in ends if end <= month.end and period_of(end) not in closed]


async def _fold_before(sessionmaker: async_sessionmaker[AsyncSession], end: datetime) -> int:
    async with sessionmaker() as session:
        unfolded: Sequence[tuple[str, str]] = (await session.execute(_UNFOLDED, {"end": end})).all()
    for code, currency in unfolded:
        livemode = code.endswith(f":{accounts.environment(True)}:{currency}")
        values = {"code": code, "currency": currency, "livemode": livemode}
        async with unit_of_work(sessionmaker) as session:
            await session.execute(_HEAD, values)
            await session.execute(_FOLD, values)
    return len(unfolded)


async def _carry(session: AsyncSession, month: Month, now: datetime) -> bool:
    """The month's period and carried amounts; False if another close wrote them first."""
    if await session.scalar(_PERIOD, {"month": month.first_day, "now": now}) is None:
        return False
    await session.execute(_CARRIED, {"month": month.first_day, "end": month.end})
    return True
