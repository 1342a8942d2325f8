"""Test events followed in commit order (issue 27, `cauri-client listen`): each event's
transaction id, so that a reader can take only what every transaction before it has
finished writing, and an index for those reads. Existing rows keep none: the feed follows
from when it is first read. Live events are never followed: the index leaves them out, so
their inserts pay nothing for it.

Revision ID: 0036_event_feed
Revises: 0035_draft_external_id
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0036_event_feed"
down_revision: str | None = "0035_draft_external_id"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Added without a default, then given one: no rewrite of the table's existing rows.
    op.execute("ALTER TABLE events ADD COLUMN txid xid8")
    op.execute("ALTER TABLE events ALTER COLUMN txid SET DEFAULT pg_current_xact_id()")
    op.execute(
        "CREATE INDEX ix_events_feed ON events (txid, merchant_id, id) "
        "WHERE NOT livemode AND txid IS NOT NULL"
    )


def downgrade() -> None:
    op.execute("DROP INDEX ix_events_feed")
    op.execute("ALTER TABLE events DROP COLUMN txid")
