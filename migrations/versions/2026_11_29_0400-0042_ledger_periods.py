"""The ledger's period close (issue 29), so that a month of postings may leave the database
(`cauri archive`) with every balance and check still holding:

- ledger_periods: the months closed (their postings all folded into account heads, their
  partitions closed to new postings), and the ones archived since.
- ledger_carried: at a month's close, what every account's postings up to that month's end
  add up to. Once the months up to it are archived, the ledger's reads that sum postings add
  the latest archived month's carried amounts for what is no longer there.
- ledger_archived: a view of the latest archived month's carried amounts, what the postings
  no longer in the database add up to per account (no row until a month is archived), which
  the reads that sum postings add.
- ledger_month_closed(): the trigger function a closed month's partition gets (BEFORE
  INSERT), refusing a posting dated in it (a back-dated transaction would change what was
  carried forward).
- ledger_default_closed(): the same refusal on `ledger_postings_default`, for a posting dated
  before the end of the last closed month: once a month is archived its partition is gone,
  and such a posting would be routed there.

Revision ID: 0042_ledger_periods
Revises: 0041_history_partitions
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0042_ledger_periods"
down_revision: str | None = "0041_history_partitions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MONTH_CLOSED = """
CREATE FUNCTION ledger_month_closed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger: the month of % is closed (%)', NEW.created_at, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege',
            HINT = 'A closed month takes no posting: date the transaction today.';
END
$$
"""


_DEFAULT_CLOSED = """
CREATE FUNCTION ledger_default_closed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.created_at < (SELECT max(month) + interval '1 month' FROM ledger_periods) THEN
        RAISE EXCEPTION 'ledger: the month of % is closed (%)', NEW.created_at, TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege',
                HINT = 'A closed month takes no posting: date the transaction today.';
    END IF;
    RETURN NEW;
END
$$
"""


def upgrade() -> None:
    op.execute(
        "CREATE TABLE ledger_periods ("
        "  month date PRIMARY KEY,"
        "  closed_at timestamptz NOT NULL,"
        "  archived_at timestamptz,"
        "  CONSTRAINT ck_ledger_periods_first_day CHECK (extract(day FROM month) = 1))"
    )
    op.execute(
        "CREATE TABLE ledger_carried ("
        "  month date NOT NULL REFERENCES ledger_periods (month),"
        "  account varchar NOT NULL,"
        "  currency varchar NOT NULL,"
        "  amount bigint NOT NULL,"
        "  CONSTRAINT pk_ledger_carried PRIMARY KEY (month, account))"
    )
    op.execute(
        "CREATE VIEW ledger_archived AS SELECT account, currency, amount FROM ledger_carried "
        "WHERE month = (SELECT max(month) FROM ledger_periods WHERE archived_at IS NOT NULL)"
    )
    op.execute(_MONTH_CLOSED)
    op.execute(_DEFAULT_CLOSED)
    op.execute(
        "CREATE TRIGGER ledger_postings_closed BEFORE INSERT ON ledger_postings_default "
        "FOR EACH ROW EXECUTE FUNCTION ledger_default_closed()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER ledger_postings_closed ON ledger_postings_default")
    op.execute("DROP FUNCTION ledger_default_closed()")
    op.execute("DROP VIEW ledger_archived")
    op.execute("DROP FUNCTION ledger_month_closed()")
    op.execute("DROP TABLE ledger_carried")
    op.execute("DROP TABLE ledger_periods")
