"""Everything one payment or payout wrote, as comparable values: its row, its ledger
transaction and postings, its events, their deliveries and the deliveries' jobs. Every
column is taken (`to_jsonb` of the whole row), so a column one write path forgets shows;
only what differs from one row to the next by construction is left out (ids, the
references that carry them, and an event's transaction id). Used to prove that the
one-statement path for outcomes decided offline writes exactly what the path that records
first writes (issue 24)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from cauri.runtime import Runtime

_SNAPSHOT = text(
    """
    WITH subject AS (SELECT to_jsonb(s) AS row FROM {table} s WHERE {key} = :key),
    tx AS (SELECT * FROM ledger_transactions WHERE reference = CAST(:key AS text)),
    ev AS (SELECT * FROM events WHERE data ->> 'reference' = CAST(:key AS text)),
    dl AS (SELECT d.* FROM webhook_deliveries d JOIN ev ON d.event_id = ev.id)
    SELECT 'row', row - 'id' - 'identifier' - 'reference' FROM subject
    UNION ALL SELECT 'transaction', to_jsonb(tx) - 'id' - 'reference' FROM tx
    UNION ALL SELECT 'posting', to_jsonb(p) - 'id' - 'transaction_id'
      FROM ledger_postings p JOIN tx ON p.transaction_id = tx.id
    UNION ALL SELECT 'event', jsonb_set(to_jsonb(ev) - 'id' - 'txid', '{{data}}',
      ev.data - 'reference' - 'identifier') FROM ev
    UNION ALL SELECT 'delivery', to_jsonb(dl) - 'id' - 'event_id' FROM dl
    UNION ALL SELECT 'job', jsonb_set(to_jsonb(j) - 'id', '{{payload}}',
      j.payload - 'delivery_id') FROM jobs j JOIN dl ON j.payload ->> 'delivery_id' = dl.id::text
    """
)


async def written(runtime: Runtime, table: str, key: object) -> list[tuple[str, Any]]:
    """What the row of `table` whose id (payments) or reference (payouts) is `key` wrote,
    sorted."""
    column = "id::text" if table == "payments" else "reference"
    statement = text(_SNAPSHOT.text.format(table=table, key=column))
    async with runtime.sessionmaker() as session:
        rows = (await session.execute(statement, {"key": str(key)})).all()
    return sorted(((kind, value) for kind, value in rows), key=repr)
