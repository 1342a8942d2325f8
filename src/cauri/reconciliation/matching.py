"""A reconciliation run: one connector account, one of the platform's days, three ways.

Each line of the operator's statements that is one of Cauri's requests is matched to its
operation (by the reference Cauri sent, or the operator's own id it answered with; failing
both, by action, amount, currency, number and the nearest time within an hour), and each
operation that succeeded to its ledger postings on the operator clearing accounts. What
differs is recorded as a discrepancy (cauri.reconciliation.kinds), once per connector, day,
kind and line or operation: a rerun adds only what is new, and closes what it no longer
finds (an operation settled since, a statement imported late).

Set-based: a day of a busy account is 100,000 lines, matched by a few statements over
indexed temporary tables in one transaction, never loaded into this process. Lines of the
day before and after are matched too, so that a request sent at 23:59 and booked by the
operator at 00:01 is no discrepancy on either day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls import jobs as call_jobs
from cauri.reconciliation import wallets
from cauri.reconciliation.days import Days
from cauri.reconciliation.kinds import DiscrepancyKind

_UUID = "'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'"
_OPERATIONS = "('collect', 'disburse', 'refund')"

# The lines of the connector's statements around the day.
_TABLES = (
    """
    CREATE TEMPORARY TABLE recon_lines (
        id bigint PRIMARY KEY, reference text, operator_id text, kind text, status text,
        amount bigint, fee bigint, currency text, phone_number text, at timestamptz,
        of_day boolean
    ) ON COMMIT DROP
    """,
    """
    CREATE TEMPORARY TABLE recon_matches (line_id bigint, operation_id uuid) ON COMMIT DROP
    """,
    """
    CREATE TEMPORARY TABLE recon_found (
        kind text, about text, line_id bigint, operation_id uuid, currency text, details jsonb
    ) ON COMMIT DROP
    """,
    "CREATE INDEX ON recon_matches (operation_id)",
    "CREATE INDEX ON recon_matches (line_id)",
)

# The same movement in two statements (a day fetched, then the dashboard's export of it
# imported; two exports that overlap) is one line: the first statement's. Within one
# statement a line twice is the operator's doing, and kept.
_LINES = text(
    """
    INSERT INTO recon_lines
    SELECT id, reference, operator_id, kind, status, amount, fee, currency, phone_number, at,
           of_day
    FROM (
        SELECT l.id, l.reference, l.operator_id, l.kind, l.status, l.amount, l.fee, l.currency,
               l.phone_number, l.at, l.at >= :start AND l.at < :end AS of_day,
               rank() OVER (
                   PARTITION BY l.operator_id, l.kind, l.status, l.amount, l.at
                   ORDER BY s.imported_at, s.id
               ) AS copy
        FROM statement_lines l JOIN operator_statements s ON s.id = l.statement_id
        WHERE s.connector = :connector AND l.at >= :wide_start AND l.at < :wide_end
    ) stated
    WHERE copy = 1
    """
)

# Each of Cauri's requests on them: the operation it names, by either reference, one per
# line (a payment's refund retried after a failure is two operations under one reference:
# the one that succeeded, else the nearest in time).
_BY_REFERENCE = text(
    f"""
    INSERT INTO recon_matches (line_id, operation_id)
    SELECT DISTINCT ON (named.line_id) named.line_id, o.id
    FROM (
        SELECT l.id AS line_id, o.id AS operation_id
        FROM recon_lines l
        JOIN operator_operations o
          ON o.id = CASE WHEN lower(l.reference) ~ {_UUID} THEN l.reference::uuid END
        WHERE l.kind IN {_OPERATIONS} AND o.connector = :connector AND o.action = l.kind
        UNION
        SELECT l.id, o.id
        FROM recon_lines l
        JOIN operator_operations o
          ON o.connector = :connector AND o.operator_reference = l.operator_id
        WHERE l.kind IN {_OPERATIONS} AND o.action = l.kind
        UNION
        -- An operator that books a refund under the payment's reference (Wave).
        SELECT l.id, o.id
        FROM recon_lines l
        JOIN operator_operations o
          ON o.action = 'refund' AND o.request ->> 'refund_of' = l.reference
        WHERE l.kind = 'refund' AND o.connector = :connector
    ) named
    JOIN recon_lines l ON l.id = named.line_id
    JOIN operator_operations o ON o.id = named.operation_id
    ORDER BY named.line_id, o.status = 'succeeded' DESC,
             abs(extract(epoch FROM o.created_at - l.at))
    """  # noqa: S608 (constants of this module)
)

# The others, by what they moved: within each kind of request to one number for one amount,
# the k-th line (in time) with the k-th operation no line names, if within an hour of each
# other (two payouts of a salary run to one number are two pairs, not one).
_BY_LIKENESS = text(
    f"""
    WITH unnamed AS (
        SELECT l.id, l.kind, abs(l.amount) AS amount, l.currency, l.phone_number, l.at,
               row_number() OVER (
                   PARTITION BY l.kind, abs(l.amount), l.currency, l.phone_number
                   ORDER BY l.at, l.id
               ) AS k
        FROM recon_lines l
        WHERE l.kind IN {_OPERATIONS} AND l.phone_number IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM recon_matches m WHERE m.line_id = l.id)
    ),
    candidates AS (
        SELECT o.id, o.action, (o.request ->> 'amount')::bigint AS amount,
               o.request ->> 'currency' AS currency, o.request ->> 'phone_number' AS phone,
               o.created_at,
               row_number() OVER (
                   PARTITION BY o.action, o.request ->> 'amount', o.request ->> 'currency',
                                o.request ->> 'phone_number'
                   ORDER BY o.created_at, o.id
               ) AS k
        FROM operator_operations o
        WHERE o.connector = :connector
          AND o.created_at >= CAST(:wide_start AS timestamptz) - interval '1 hour'
          AND o.created_at < CAST(:wide_end AS timestamptz) + interval '1 hour'
          AND (o.action, o.request ->> 'phone_number') IN (
              SELECT kind, phone_number FROM unnamed
          )
          AND NOT EXISTS (SELECT 1 FROM recon_matches m WHERE m.operation_id = o.id)
    )
    INSERT INTO recon_matches (line_id, operation_id)
    SELECT l.id, o.id
    FROM unnamed l
    JOIN candidates o
      ON o.action = l.kind AND o.amount = l.amount AND o.currency = l.currency
     AND o.phone = l.phone_number AND o.k = l.k
     AND o.created_at BETWEEN l.at - interval '1 hour' AND l.at + interval '1 hour'
    """  # noqa: S608
)

# What differs, as discrepancies' rows: kind, about, line, operation, currency, details.
_FOUND = text(
    f"""
    INSERT INTO recon_found (kind, about, line_id, operation_id, currency, details)
    WITH matched AS (
        SELECT l.*, o.id AS operation_id, o.status AS operation_status,
               (o.request ->> 'amount')::bigint AS operation_amount,
               o.request ->> 'currency' AS operation_currency,
               -- Each succeeded line of the operation in turn: a second is a duplicate.
               row_number() OVER (
                   PARTITION BY o.id, l.status = 'succeeded' ORDER BY l.at, l.id
               ) AS nth,
               -- Its latest line: a status that changed (a reversal the next day) is found on
               -- the day it changed, where its correction's money moves.
               row_number() OVER (PARTITION BY o.id ORDER BY l.at DESC, l.id DESC) AS latest,
               -- What the operator says of the operation, all its lines read: a reversal
               -- (Wave) undoes what succeeded.
               CASE WHEN bool_or(l.status = 'failed') OVER (PARTITION BY o.id) THEN 'failed'
                    WHEN bool_or(l.status = 'succeeded') OVER (PARTITION BY o.id)
                    THEN 'succeeded'
                    ELSE 'pending' END AS operator_status
        FROM recon_lines l
        JOIN recon_matches m ON m.line_id = l.id
        JOIN operator_operations o ON o.id = m.operation_id
    ),
    day_operations AS (
        SELECT o.id, o.action, o.status, o.subject_ref,
               (o.request ->> 'amount')::bigint AS amount, o.request ->> 'currency' AS currency
        FROM operator_operations o
        WHERE o.connector = :connector AND o.sent
          AND o.created_at >= :start AND o.created_at < :end
    )
    SELECT 'missing_at_cauri' AS kind, 'line:' || l.id AS about, l.id AS line_id,
           NULL::uuid AS operation_id, l.currency,
           jsonb_build_object('operator_id', l.operator_id, 'reference', l.reference,
                              'kind', l.kind, 'amount', l.amount, 'at', l.at) AS details
    FROM recon_lines l
    WHERE l.of_day AND l.kind IN {_OPERATIONS} AND l.status = 'succeeded'
      AND NOT EXISTS (SELECT 1 FROM recon_matches m WHERE m.line_id = l.id)
    UNION ALL
    SELECT 'amount_differs', 'line:' || id, id, operation_id, currency,
           jsonb_build_object('operator', abs(amount), 'cauri', operation_amount)
    FROM matched WHERE of_day AND status = 'succeeded' AND abs(amount) <> operation_amount
    UNION ALL
    SELECT 'currency_differs', 'line:' || id, id, operation_id, currency,
           jsonb_build_object('operator', currency, 'cauri', operation_currency)
    FROM matched WHERE of_day AND currency <> operation_currency
    UNION ALL
    SELECT 'status_differs', 'line:' || id, id, operation_id, currency,
           jsonb_build_object('operator', operator_status, 'cauri', operation_status)
    FROM matched WHERE of_day AND latest = 1 AND operator_status <> operation_status
    UNION ALL
    SELECT 'duplicate_at_operator', 'line:' || id, id, operation_id, currency,
           jsonb_build_object('operator_id', operator_id, 'amount', amount, 'at', at)
    FROM matched WHERE of_day AND status = 'succeeded' AND nth > 1
    UNION ALL
    SELECT 'missing_at_operator', 'operation:' || o.id, NULL, o.id, o.currency,
           jsonb_build_object('action', o.action, 'subject', o.subject_ref,
                              'amount', o.amount)
    FROM day_operations o
    WHERE o.status = 'succeeded'
      AND NOT EXISTS (SELECT 1 FROM recon_matches m WHERE m.operation_id = o.id)
      -- Without a statement of the day, nothing is missing from it: it is not there yet.
      AND EXISTS (
          SELECT 1 FROM operator_statements s
          WHERE s.connector = :connector AND s.first_day <= :day AND s.last_day >= :day
      )
    UNION ALL
    SELECT 'ledger_differs', 'operation:' || o.id, NULL, o.id, o.currency,
           jsonb_build_object('subject', o.subject_ref, 'expected', o.expected,
                              'posted', o.posted)
    FROM (
        SELECT o.id, o.subject_ref, o.currency,
               CASE o.action WHEN 'collect' THEN -o.amount ELSE o.amount END AS expected,
               coalesce(sum(p.amount) FILTER (
                   WHERE p.account LIKE 'operator:%:clearing:live:%'), 0) AS posted
        FROM day_operations o
        -- Its subject's own movements (a collection's id is its payment's: not the wallet's).
        LEFT JOIN ledger_transactions t
          ON t.reference = o.subject_ref AND t.livemode AND t.kind <> 'carried'
        LEFT JOIN ledger_postings p ON p.transaction_id = t.id
        WHERE o.status = 'succeeded'
        GROUP BY o.id, o.subject_ref, o.currency, o.action, o.amount
    ) o
    WHERE o.posted <> o.expected
    UNION ALL
    SELECT 'fee_taken', 'fees:' || currency, NULL, NULL, currency,
           jsonb_build_object('amount', sum(fee), 'lines', count(*))
    FROM (
        SELECT currency, fee FROM recon_lines WHERE of_day AND fee <> 0
        UNION ALL
        SELECT currency, -amount FROM recon_lines WHERE of_day AND kind = 'fee'
        UNION ALL
        -- A reversal that gives back more than its payout sent gives its fee back (Wave).
        SELECT r.currency, -(r.amount + s.amount)
        FROM matched r JOIN matched s ON s.operation_id = r.operation_id
        WHERE r.of_day AND r.status = 'failed' AND s.status = 'succeeded' AND s.nth = 1
          AND s.amount < 0 AND r.amount + s.amount > 0
    ) fees
    GROUP BY currency HAVING sum(fee) <> 0
    """  # noqa: S608
)

# Recorded once; what an earlier run found and this one no longer does is closed.
_RECORD = text(
    """
    WITH added AS (
        INSERT INTO discrepancies
            (connector, day, kind, about, line_id, operation_id, currency, details, found_at)
        SELECT :connector, :day, kind, about, line_id, operation_id, currency, details, :now
        FROM recon_found
        -- Found again: what it says now, and open again if a run had closed it or what it
        -- says has changed since a person resolved it (a late line, other fees).
        ON CONFLICT (connector, day, kind, about) DO UPDATE
        SET details = EXCLUDED.details,
            resolved_at = CASE WHEN discrepancies.resolved_by = 'reconciliation'
                                 OR discrepancies.details IS DISTINCT FROM EXCLUDED.details
                               THEN NULL ELSE discrepancies.resolved_at END,
            resolved_by = CASE WHEN discrepancies.resolved_by = 'reconciliation'
                                 OR discrepancies.details IS DISTINCT FROM EXCLUDED.details
                               THEN NULL ELSE discrepancies.resolved_by END,
            resolution = CASE WHEN discrepancies.resolved_by = 'reconciliation'
                                OR discrepancies.details IS DISTINCT FROM EXCLUDED.details
                              THEN NULL ELSE discrepancies.resolution END
        RETURNING (xmax = 0) AS inserted
    ),
    closed AS (
        UPDATE discrepancies d
        SET resolved_at = :now, resolved_by = 'reconciliation', resolution = :gone
        WHERE d.connector = :connector AND d.day = :day AND d.resolved_at IS NULL
          AND NOT EXISTS (
              SELECT 1 FROM recon_found f WHERE f.kind = d.kind AND f.about = d.about
          )
        RETURNING d.id
    )
    SELECT (SELECT count(*) FROM recon_lines WHERE of_day) AS lines,
           (SELECT count(*) FROM recon_matches m JOIN recon_lines l ON l.id = m.line_id
            WHERE l.of_day) AS matched,
           (SELECT count(*) FROM added WHERE inserted) AS added,
           (SELECT count(*) FROM closed) AS closed
    """
)

# Pending operations the statement shows final: asked again through the call protocol,
# whose answer settles them (a statement line is not an answer the protocol verifies).
_PENDING_SHOWN_FINAL = text(
    """
    SELECT DISTINCT o.id FROM recon_found f JOIN operator_operations o ON o.id = f.operation_id
    WHERE f.kind = 'status_differs' AND o.status = 'pending'
    """
)

_COUNTS = text("SELECT kind, count(*) FROM recon_found GROUP BY kind")

_ONE_AT_A_TIME = text("SELECT pg_advisory_xact_lock(7245, hashtext(:connector))")


async def one_at_a_time(session: AsyncSession, connector: str) -> None:
    """Until the caller's transaction ends, no other run or correction of the connector's
    wallet: a run books the wallet's movements once and reads its balance whole."""
    await session.execute(_ONE_AT_A_TIME, {"connector": connector})


@dataclass(frozen=True)
class Run:
    connector: str
    day: date
    lines: int  # the day's lines
    matched: int  # of which matched to an operation
    found: dict[str, int]  # discrepancies found by kind (new or not)
    added: int  # new this run
    closed: int  # found by an earlier run, gone now
    asked: int  # pending operations asked again
    booked: int  # wallet movements booked (cauri.reconciliation.wallets)


async def run(session: AsyncSession, connector: str, day: date, now: datetime, days: Days) -> Run:
    """Matches the day and records what differs, in the caller's transaction."""
    start, end = days.bounds(day)
    bounds = {
        "connector": connector,
        "day": day,
        "start": start,
        "end": end,
        "wide_start": start - timedelta(days=1),
        "wide_end": end + timedelta(days=1),
    }
    await one_at_a_time(session, connector)
    for table in _TABLES:
        await session.execute(text(table))
    await session.execute(_LINES, bounds)
    await session.execute(text("ANALYZE recon_lines"))
    await session.execute(_BY_REFERENCE, bounds)
    # Temporary tables have no statistics until analysed: without them the planner guesses
    # them small and scans them once per line (quadratic in a day's lines).
    await session.execute(text("ANALYZE recon_matches"))
    await session.execute(_BY_LIKENESS, bounds)
    await session.execute(text("ANALYZE recon_matches"))
    await session.execute(_FOUND, bounds)
    booked = await wallets.book(session, connector, day, days)
    await wallets.compare(session, connector, day)
    found = {kind: int(n) for kind, n in (await session.execute(_COUNTS)).all()}
    pending = list((await session.scalars(_PENDING_SHOWN_FINAL)).all())
    for operation_id in pending:
        await call_jobs.POLL.enqueue_once(
            session,
            call_jobs.OperationJob(str(operation_id), scheduled=False),
            livemode=True,
            now=now,
        )
    row = (
        await session.execute(
            _RECORD,
            {
                "connector": connector,
                "day": day,
                "now": now,
                "gone": f"Plus constaté par le rapprochement du {now:%Y-%m-%d %H:%M} UTC.",
            },
        )
    ).one()
    return Run(
        connector=connector,
        day=day,
        lines=row.lines,
        matched=row.matched,
        found={str(DiscrepancyKind(kind)): n for kind, n in found.items()},
        added=row.added,
        closed=row.closed,
        asked=len(pending),
        booked=booked.openings + booked.movements,
    )
