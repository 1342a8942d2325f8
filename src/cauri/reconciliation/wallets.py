"""A connector account's wallet in the ledger, against what its operator states.

Cauri's operations move the wallet as they are carried out (cauri.calls books each one).
What moves it outside them comes from the statements and is booked here, each once: its
opening balance (from the first statement that states one: what the wallet held before
Cauri read it, less what Cauri had booked by then) and the top-ups and settlements between
it and the platform's bank. The operator's fees are finance's to book (a `fee_taken`
discrepancy resolved with money). Then the wallet's balance at the end of a day can be
compared with the closing balance the operator states for it (`balance_differs`), at the
instant that balance stands at.

Runs inside a reconciliation run (cauri.reconciliation.matching), over its temporary
tables of the day's lines and matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import Conflict
from cauri.kit.months import Month
from cauri.ledger import accounts, movements, periods
from cauri.ledger.movements import Movement
from cauri.reconciliation.days import Days

LIVE = True  # statements are of live wallets: sandboxes move no money to reconcile
# The statement's last line is in the balance it closes with.
_AFTER = timedelta(microseconds=1)

# The opening balance of each currency: the first statement (by the days it covers) that
# states one, and the instant it stands at (just before its first line).
_OPENINGS = text(
    """
    SELECT DISTINCT ON (stated.currency) stated.currency, stated.amount, s.first_day,
           (SELECT min(l.at) FROM statement_lines l WHERE l.statement_id = s.id) AS first_at
    FROM operator_statements s,
         jsonb_each_text(s.opening_balances) AS stated(currency, amount)
    WHERE s.connector = :connector AND s.first_day IS NOT NULL
    ORDER BY stated.currency, s.first_day, s.imported_at, s.id
    """
)

# What Cauri booked on either side of the opening's instant that the operator booked on the
# other: posted after it, within the hour, and on no line of a statement after it (the
# operator moved it before: it is in the opening), less posted before it and on a line after
# it (not in the opening). The run's tables cover the opening's day and the days around it.
_OPENING_ACROSS = text(
    """
    WITH later AS (
        SELECT DISTINCT o.subject_ref
        FROM recon_matches m
        JOIN recon_lines l ON l.id = m.line_id
        JOIN operator_operations o ON o.id = m.operation_id
        WHERE l.at >= :at
    )
    SELECT coalesce(sum(p.amount) FILTER (
               WHERE t.created_at >= :at AND t.reference NOT IN (SELECT subject_ref FROM later)
           ), 0)
         - coalesce(sum(p.amount) FILTER (
               WHERE t.created_at < :at AND t.reference IN (SELECT subject_ref FROM later)
           ), 0)
    FROM ledger_transactions t
    JOIN ledger_postings p ON p.transaction_id = t.id AND p.account = :wallet
    WHERE t.kind = 'carried'
      AND t.created_at >= CAST(:at AS timestamptz) - interval '1 day'
      AND t.created_at < CAST(:at AS timestamptz) + interval '1 hour'
    """
)

_BOOKED = text("SELECT EXISTS (SELECT 1 FROM ledger_transactions WHERE reference = :reference)")

# What the wallet's account holds from the postings of transactions before `end`.
_POSTED_BEFORE = text(
    """
    SELECT coalesce(sum(amount), 0) FROM (
        SELECT amount FROM ledger_postings WHERE account = :wallet AND created_at < :end
        UNION ALL SELECT amount FROM ledger_archived WHERE account = :wallet
    ) AS every
    """
)

# The day's top-ups and settlements not booked yet (an operator's own id is its line's
# reference in the ledger, whichever statement gave it): one per operator id, even when two
# statements stamp it differently (an API's milliseconds, an export's seconds).
_MOVEMENTS = text(
    """
    SELECT DISTINCT ON (l.operator_id, l.kind) l.kind, l.operator_id, l.amount, l.currency,
           l.at
    FROM recon_lines l
    WHERE l.of_day AND l.kind IN ('topup', 'settlement') AND l.status = 'succeeded'
      AND NOT EXISTS (
          SELECT 1 FROM ledger_transactions t
          WHERE t.reference = :prefix || l.operator_id
            AND t.kind IN ('wallet_topup', 'wallet_settlement')
      )
    ORDER BY l.operator_id, l.kind, l.at, l.id
    """
)

# The closing balances the operator states for the day: the latest statement ending on it,
# with the instant its balance stands at (just after its last line).
_CLOSINGS = text(
    """
    SELECT DISTINCT ON (stated.currency) stated.currency, stated.amount,
           (SELECT max(l.at) FROM statement_lines l WHERE l.statement_id = s.id) AS closed_at
    FROM operator_statements s,
         jsonb_each_text(s.closing_balances) AS stated(currency, amount)
    WHERE s.connector = :connector AND s.last_day = :day
    ORDER BY stated.currency, s.imported_at DESC, s.id DESC
    """
)

# Operations the operator booked on one side of that instant and Cauri on the other (a
# callback a minute late): counted on the operator's side, so that the balances compare. One
# on no line at all that Cauri settled within the hour after it is taken as booked before it
# (as the opening takes it: _OPENING_ACROSS); one the operator did not book then shows.
_ACROSS = text(
    """
    WITH booked AS (
        SELECT o.subject_ref, min(l.at) AS at
        FROM recon_matches m
        JOIN recon_lines l ON l.id = m.line_id
        JOIN operator_operations o ON o.id = m.operation_id
        GROUP BY o.subject_ref
    )
    SELECT coalesce(sum(p.amount) FILTER (WHERE b.at < :end AND t.created_at >= :end), 0)
         - coalesce(sum(p.amount) FILTER (WHERE b.at >= :end AND t.created_at < :end), 0)
         + coalesce(sum(p.amount) FILTER (
               WHERE b.subject_ref IS NULL AND t.created_at >= :end
                 AND t.created_at < CAST(:end AS timestamptz) + interval '1 hour'
           ), 0)
    FROM ledger_transactions t
    JOIN ledger_postings p ON p.transaction_id = t.id AND p.account = :wallet
    LEFT JOIN booked b ON b.subject_ref = t.reference
    WHERE t.kind = 'carried'
      AND t.created_at >= CAST(:end AS timestamptz) - interval '2 days'
      AND t.created_at < CAST(:end AS timestamptz) + interval '2 days'
    """
)

# Corrections of the wallet (cauri.reconciliation.service) count on the day of the
# discrepancy they resolve, whenever finance booked them.
_CORRECTIONS_ACROSS = text(
    """
    SELECT coalesce(sum(p.amount) FILTER (WHERE d.day <= :day AND t.created_at >= :end), 0)
         - coalesce(sum(p.amount) FILTER (WHERE d.day > :day AND t.created_at < :end), 0)
    FROM discrepancies d
    JOIN ledger_transactions t
      ON t.reference = 'discrepancy:' || d.id AND t.kind = 'adjustment'
    JOIN ledger_postings p ON p.transaction_id = t.id AND p.account = :wallet
    WHERE d.connector = :connector
    """
)

_FOUND = text(
    """
    INSERT INTO recon_found (kind, about, line_id, operation_id, currency, details)
    VALUES ('balance_differs', 'balance:' || CAST(:currency AS text), NULL, NULL, :currency,
            jsonb_build_object('operator', CAST(:stated AS bigint), 'cauri',
                               CAST(:held AS bigint), 'difference', CAST(:difference AS bigint)))
    """
)


def _wallet(connector: str, currency: str) -> str:
    return accounts.connector_wallet(connector, LIVE, currency).code


def _reference(connector: str) -> str:
    return f"{connector}:line:"


async def _held_before(session: AsyncSession, connector: str, currency: str, end: datetime) -> int:
    """The wallet as the ledger has it at `end`, in the operator's sign (money in: positive).
    Not within an archived month: its postings are no longer there to stop at `end`."""
    archived = await periods.archived_through(session)
    if archived is not None and end < archived.end:
        raise Conflict(f"{Month.of(end)} est archivé : le portefeuille n'y est plus rapproché.")
    wallet = _wallet(connector, currency)
    return -int(await session.scalar(_POSTED_BEFORE, {"wallet": wallet, "end": end}) or 0)


@dataclass(frozen=True)
class Booked:
    openings: int
    movements: int


async def book(session: AsyncSession, connector: str, day: date, days: Days) -> Booked:
    """Books what the statements say moved the wallet outside Cauri's operations, once; an
    opening balance by the run of its statement's first day (whose tables hold the lines
    around it)."""
    openings = 0
    for currency, stated, first_day, first_at in (
        await session.execute(_OPENINGS, {"connector": connector})
    ).all():
        reference = f"{connector}:opening:{currency}"
        if first_day != day or await session.scalar(_BOOKED, {"reference": reference}):
            continue
        at = first_at or days.start(first_day)
        wallet = _wallet(connector, currency)
        across = int(await session.scalar(_OPENING_ACROSS, {"wallet": wallet, "at": at}) or 0)
        held = await _held_before(session, connector, currency, at) - across
        if int(stated) == held:
            continue  # nothing to book: the wallet held what Cauri had booked
        # Backdated to the instant it is the balance of, so that any later balance reads it.
        await movements.wallet_moved(
            session,
            Movement.WALLET_OPENING,
            connector=connector,
            livemode=LIVE,
            currency=currency,
            into_wallet=int(stated) - held,
            reference=reference,
            at=at - _AFTER,
        )
        openings += 1
    moved = (await session.execute(_MOVEMENTS, {"prefix": _reference(connector)})).all()
    for kind, operator_id, amount, currency, at in moved:
        await movements.wallet_moved(
            session,
            Movement.WALLET_TOPUP if kind == "topup" else Movement.WALLET_SETTLEMENT,
            connector=connector,
            livemode=LIVE,
            currency=currency,
            into_wallet=int(amount),
            reference=_reference(connector) + operator_id,
            at=at,
        )
    return Booked(openings, len(moved))


async def compare(session: AsyncSession, connector: str, day: date) -> None:
    """Records a `balance_differs` for each currency whose closing balance the operator
    states for the day and the ledger's wallet does not hold at the same instant (the
    statement's, whatever the platform's time zone: an operator's API gives its own days)."""
    for currency, stated, closed_at in (
        await session.execute(_CLOSINGS, {"connector": connector, "day": day})
    ).all():
        if closed_at is None:
            continue  # a statement without lines states the balance of no instant
        end = closed_at + _AFTER
        wallet = _wallet(connector, currency)
        across = int(await session.scalar(_ACROSS, {"wallet": wallet, "end": end}) or 0)
        corrected = int(
            await session.scalar(
                _CORRECTIONS_ACROSS,
                {"wallet": wallet, "end": end, "day": day, "connector": connector},
            )
            or 0
        )
        held = await _held_before(session, connector, currency, end) - across - corrected
        if held != int(stated):
            await session.execute(
                _FOUND,
                {
                    "currency": currency,
                    "stated": int(stated),
                    "held": held,
                    "difference": int(stated) - held,
                },
            )
