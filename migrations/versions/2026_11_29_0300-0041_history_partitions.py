"""History by month (issue 29): events, webhook deliveries and their attempts, operator
exchanges and ledger postings become tables partitioned by month (PostgreSQL's declarative
range partitioning), so that a month past retention can be detached and archived whole
instead of deleted row by row.

Each table keeps its name; its rows so far become one partition, `<table>_legacy`, attached
as they are (no copy; its indexes are built once), covering every instant before the first
month that has none of them (the current month when the table is empty). A `<table>_default`
partition takes a row no month's partition covers, so that a write never fails for want of
one; `cauri.history.partitions` creates the months ahead (`cauri migrate`, then a daily job).
Months are UTC months.

A unique key of a partitioned table must hold its partition key, so each one is the old key
with a column that the old key determines:
- events (id, created_at); webhook_deliveries (id, created_at) and (event_id, created_at):
  a delivery is written with its event, in the same statement, at the event's instant; the
  foreign key (event_id, created_at) → events says so.
- webhook_attempts gain `delivery_created_at`, their delivery's: partitioned by it, an
  attempt lives and is archived with its delivery; (delivery_id, number, delivery_created_at)
  is the old guard against recording an attempt number twice, and the foreign key to
  (id, created_at) of webhook_deliveries keeps ON DELETE CASCADE.
- ledger_postings gain `created_at`, their transaction's: the foreign key
  (transaction_id, created_at) → ledger_transactions (id, created_at) makes it so. The
  zero-sum check at commit then reads the transaction's postings in one partition, and the
  append-only trigger refuses a change of `created_at` as of the other columns.
- operator_exchanges (id, created_at): ids come from the table's identity.
An id alone is still looked up (a delivery by its id, a posting by its transaction): the
query reads each partition's index, a dozen small ones a year.

Revision ID: 0041_history_partitions
Revises: 0040_receivables_index
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0041_history_partitions"
down_revision: str | None = "0040_receivables_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The first instant of the month after `key`'s latest (UTC), or of this month when empty.
_LEGACY_BOUND = """
CREATE FUNCTION pg_temp.legacy_bound(relation regclass, key text) RETURNS timestamptz
LANGUAGE plpgsql AS $$
DECLARE
    latest timestamptz;
BEGIN
    EXECUTE format('SELECT max(%I) FROM %s', key, relation) INTO latest;
    IF latest IS NULL THEN
        RETURN date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    END IF;
    RETURN (date_trunc('month', latest AT TIME ZONE 'UTC') + interval '1 month')
        AT TIME ZONE 'UTC';
END
$$
"""

# The old table becomes <table>_legacy, a new partitioned <table> takes its place with the
# same columns and defaults, and the old one is attached as the partition of every instant
# before its bound. Indexes and keys are declared on the new table afterwards (each
# partition gets its own); the old table's are dropped first so that names stay free.
_PARTITIONED = """
CREATE FUNCTION pg_temp.partitioned(name text, key text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    bound timestamptz := pg_temp.legacy_bound(name::regclass, key);
    index record;
BEGIN
    FOR index IN
        SELECT c.conname FROM pg_constraint c
        WHERE c.conrelid = name::regclass AND c.contype IN ('p', 'u', 'f')
    LOOP
        EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', name, index.conname);
    END LOOP;
    FOR index IN
        SELECT i.indexrelid::regclass AS relation FROM pg_index i
        WHERE i.indrelid = name::regclass
    LOOP
        EXECUTE format('DROP INDEX %s', index.relation);
    END LOOP;
    EXECUTE format('ALTER TABLE %I RENAME TO %I', name, name || '_legacy');
    EXECUTE format(
        'CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS) '
        'PARTITION BY RANGE (%I)', name, name || '_legacy', key);
    EXECUTE format(
        'ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)',
        name, name || '_legacy', bound);
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', name || '_default', name);
END
$$
"""

_POSTINGS_BALANCED = """
CREATE OR REPLACE FUNCTION ledger_postings_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    off bigint;
BEGIN
    SELECT sum(p.amount) INTO off FROM ledger_postings p
    WHERE p.transaction_id = NEW.transaction_id AND p.currency = NEW.currency
        AND p.created_at = NEW.created_at;
    IF off <> 0 THEN
        RAISE EXCEPTION 'ledger: transaction % does not sum to zero in % (%)',
            NEW.transaction_id, NEW.currency, off
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_postings_balanced',
                HINT = 'Every ledger transaction''s postings sum to zero per currency.';
    END IF;
    RETURN NULL;
END
$$
"""


def _postings_triggers(columns: str) -> None:
    op.execute(
        "CREATE CONSTRAINT TRIGGER ledger_postings_balanced AFTER INSERT ON ledger_postings "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_postings_balanced()"
    )
    op.execute(
        "CREATE TRIGGER ledger_postings_append_only "
        f"BEFORE UPDATE OF {columns} OR DELETE "
        "ON ledger_postings FOR EACH ROW EXECUTE FUNCTION ledger_postings_append_only()"
    )
    op.execute(
        "CREATE TRIGGER ledger_postings_no_truncate BEFORE TRUNCATE ON ledger_postings "
        "FOR EACH STATEMENT EXECUTE FUNCTION ledger_postings_append_only()"
    )


def upgrade() -> None:
    op.execute(_LEGACY_BOUND)
    op.execute(_PARTITIONED)

    # The new columns, filled from the rows they follow; the triggers off while postings are.
    op.execute("DROP TRIGGER ledger_postings_no_truncate ON ledger_postings")
    op.execute("DROP TRIGGER ledger_postings_append_only ON ledger_postings")
    op.execute("DROP TRIGGER ledger_postings_balanced ON ledger_postings")
    op.execute("ALTER TABLE ledger_postings ADD COLUMN created_at timestamptz")
    op.execute(
        "UPDATE ledger_postings p SET created_at = t.created_at "
        "FROM ledger_transactions t WHERE t.id = p.transaction_id"
    )
    op.execute("ALTER TABLE ledger_postings ALTER COLUMN created_at SET NOT NULL")
    op.execute("ALTER TABLE webhook_attempts ADD COLUMN delivery_created_at timestamptz")
    op.execute(
        "UPDATE webhook_attempts a SET delivery_created_at = d.created_at "
        "FROM webhook_deliveries d WHERE d.id = a.delivery_id"
    )
    op.execute("ALTER TABLE webhook_attempts ALTER COLUMN delivery_created_at SET NOT NULL")

    # An identity column cannot be attached as a partition's: operator_exchanges' ids come
    # from a sequence of their own instead, going on from the last one.
    op.execute("ALTER TABLE operator_exchanges ALTER COLUMN id DROP IDENTITY")
    op.execute("CREATE SEQUENCE operator_exchanges_id_seq")
    op.execute(
        "SELECT setval('operator_exchanges_id_seq', "
        "coalesce((SELECT max(id) FROM operator_exchanges), 0) + 1, false)"
    )
    op.execute(
        "ALTER TABLE operator_exchanges "
        "ALTER COLUMN id SET DEFAULT nextval('operator_exchanges_id_seq')"
    )

    # Referencing tables first: their foreign keys go before the keys they reference.
    for name, key in (
        ("webhook_attempts", "delivery_created_at"),
        ("webhook_deliveries", "created_at"),
        ("events", "created_at"),
        ("operator_exchanges", "created_at"),
        ("ledger_postings", "created_at"),
    ):
        op.execute(f"SELECT pg_temp.partitioned('{name}', '{key}')")

    # The sequences of the ids belong to the partitioned tables: a legacy partition archived
    # must not take its sequence with it.
    for name in ("webhook_attempts", "ledger_postings", "operator_exchanges"):
        op.execute(f"ALTER SEQUENCE {name}_id_seq OWNED BY {name}.id")

    op.execute("ALTER TABLE events ADD CONSTRAINT pk_events PRIMARY KEY (id, created_at)")
    op.execute("CREATE INDEX ix_events_list ON events (merchant_id, livemode, created_at)")
    op.execute(
        "CREATE INDEX ix_events_feed ON events (txid, merchant_id, id) "
        "WHERE NOT livemode AND txid IS NOT NULL"
    )
    op.execute(
        "ALTER TABLE events ADD CONSTRAINT fk_events_merchant_id_merchants "
        "FOREIGN KEY (merchant_id) REFERENCES merchants (id)"
    )

    op.execute(
        "ALTER TABLE webhook_deliveries ADD CONSTRAINT pk_webhook_deliveries "
        "PRIMARY KEY (id, created_at)"
    )
    op.execute(
        "ALTER TABLE webhook_deliveries ADD CONSTRAINT uq_webhook_deliveries_event_id "
        "UNIQUE (event_id, created_at)"
    )
    op.execute(
        "CREATE INDEX ix_webhook_deliveries_list "
        "ON webhook_deliveries (merchant_id, livemode, created_at)"
    )
    op.execute(
        "ALTER TABLE webhook_deliveries ADD CONSTRAINT fk_webhook_deliveries_event_id_events "
        "FOREIGN KEY (event_id, created_at) REFERENCES events (id, created_at)"
    )
    op.execute(
        "ALTER TABLE webhook_deliveries ADD CONSTRAINT "
        "fk_webhook_deliveries_merchant_id_merchants "
        "FOREIGN KEY (merchant_id) REFERENCES merchants (id)"
    )

    op.execute(
        "ALTER TABLE webhook_attempts ADD CONSTRAINT pk_webhook_attempts "
        "PRIMARY KEY (id, delivery_created_at)"
    )
    op.execute(
        "ALTER TABLE webhook_attempts ADD CONSTRAINT uq_webhook_attempts_delivery_id "
        "UNIQUE (delivery_id, number, delivery_created_at)"
    )
    op.execute(
        "ALTER TABLE webhook_attempts ADD CONSTRAINT "
        "fk_webhook_attempts_delivery_id_webhook_deliveries "
        "FOREIGN KEY (delivery_id, delivery_created_at) "
        "REFERENCES webhook_deliveries (id, created_at) ON DELETE CASCADE"
    )

    op.execute(
        "ALTER TABLE operator_exchanges ADD CONSTRAINT pk_operator_exchanges "
        "PRIMARY KEY (id, created_at)"
    )
    op.execute(
        "CREATE INDEX ix_operator_exchanges_connector_created "
        "ON operator_exchanges (connector, created_at)"
    )
    op.execute(
        "CREATE INDEX ix_operator_exchanges_operation ON operator_exchanges (operation_id, id)"
    )
    op.execute(
        "ALTER TABLE operator_exchanges ADD CONSTRAINT "
        "fk_operator_exchanges_operation_id_operator_operations "
        "FOREIGN KEY (operation_id) REFERENCES operator_operations (id)"
    )

    op.execute(
        "ALTER TABLE ledger_postings ADD CONSTRAINT pk_ledger_postings PRIMARY KEY (id, created_at)"
    )
    op.execute(
        "CREATE INDEX ix_ledger_postings_account_transaction "
        "ON ledger_postings (account, transaction_id) INCLUDE (amount)"
    )
    op.execute(
        "CREATE INDEX ix_ledger_postings_unfolded ON ledger_postings (account) WHERE NOT folded"
    )
    op.execute(
        "CREATE INDEX ix_ledger_postings_receivable ON ledger_postings (account) "
        "INCLUDE (currency, amount) WHERE account LIKE 'merchant:%:receivable:%'"
    )
    op.execute("CREATE INDEX ix_ledger_postings_transaction ON ledger_postings (transaction_id)")
    op.execute(
        "CREATE UNIQUE INDEX uq_ledger_transactions_id_created_at "
        "ON ledger_transactions (id, created_at)"
    )
    op.execute(
        "ALTER TABLE ledger_postings ADD CONSTRAINT "
        "fk_ledger_postings_transaction_id_ledger_transactions "
        "FOREIGN KEY (transaction_id, created_at) "
        "REFERENCES ledger_transactions (id, created_at)"
    )
    op.execute(_POSTINGS_BALANCED)
    _postings_triggers("transaction_id, account, currency, amount, created_at")


def downgrade() -> None:
    raise NotImplementedError(
        "0041 is not undone: restore the database's backup taken before `cauri migrate`"
    )
