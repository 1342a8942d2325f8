#!/usr/bin/env bash
# The zero-sum trigger's cost in PostgreSQL alone (issue 23): pgbench appending one
# payment's ledger transaction and its three postings in one statement
# (bench/zero_sum_append.sql), in turn with no trigger, with the deferred row trigger of
# migration 0022 (`ledger_postings_balanced`: one check per posting), with a deferred
# trigger on `ledger_transactions` instead (one check per transaction, blind to postings
# added to an older transaction), and with a statement-level trigger over the statement's
# new rows (the forms bench/README.md compares), ROUNDS times.
#
# Needs pgbench, psql and uv. A fresh database on PG_SERVER is created, migrated and
# dropped at the end (KEEP=1 keeps it). SYNC=off runs pgbench with synchronous_commit off:
# no wait for the WAL flush, so that the rate shows PostgreSQL's CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_SERVER=${PG_SERVER:-postgresql://postgres@127.0.0.1:5432}
DURATION=${DURATION:-10}   # seconds per run
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-3}
SYNC=${SYNC:-on}

source bench/common.sh
require pgbench psql uv
bench_start cauri_zero_sum

admin "CREATE DATABASE \"$DB\""
"$BIN/cauri" migrate >/dev/null
query "CREATE FUNCTION bench_statement_balanced() RETURNS trigger LANGUAGE plpgsql AS \$\$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted GROUP BY transaction_id, currency HAVING sum(amount) <> 0)
  THEN RAISE EXCEPTION 'unbalanced' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END \$\$;
CREATE TRIGGER bench_statement_balanced AFTER INSERT ON ledger_postings
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT
  EXECUTE FUNCTION bench_statement_balanced();
CREATE FUNCTION bench_transaction_balanced() RETURNS trigger LANGUAGE plpgsql AS \$\$
BEGIN
  IF EXISTS (SELECT 1 FROM ledger_postings p WHERE p.transaction_id = NEW.id
             GROUP BY p.currency HAVING sum(p.amount) <> 0)
  THEN RAISE EXCEPTION 'unbalanced' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END \$\$;
CREATE CONSTRAINT TRIGGER bench_transaction_balanced AFTER INSERT ON ledger_transactions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bench_transaction_balanced()
" >/dev/null

VARIANTS="none ledger_postings_balanced bench_transaction_balanced bench_statement_balanced"
only() {  # the one trigger left enabled (none: none)
  for trigger in $VARIANTS; do
    [[ $trigger == none ]] && continue
    table=$([[ $trigger == bench_transaction_balanced ]] && echo ledger_transactions \
      || echo ledger_postings)
    state=$([[ $trigger == "$1" ]] && echo ENABLE || echo DISABLE)
    query "ALTER TABLE $table $state TRIGGER $trigger" >/dev/null
  done
}

echo "== $(nproc) cores, pgbench -c$CONNECTIONS -j$THREADS -T$DURATION -M prepared," \
  "synchronous_commit=$SYNC, $(date -u '+%F %H:%M UTC'), load $(load)"
for round in $(seq "$ROUNDS"); do
  for variant in $VARIANTS; do
    only "$variant"
    PGOPTIONS="-c synchronous_commit=$SYNC" pgbench -n -f bench/zero_sum_append.sql \
      -c "$CONNECTIONS" -j "$THREADS" -T "$DURATION" -M prepared "$CAURI_DATABASE_URL" \
      >"$WORK/pgbench.$variant.$round" 2>&1
    echo "$round $variant tps=$(awk '/^tps/ { print $3; exit }' "$WORK/pgbench.$variant.$round")" \
      "failed=$(awk '/failed transactions/ { print $5; exit }' "$WORK/pgbench.$variant.$round")" \
      "load=$(load | tr ' ' /)" | tee -a "$WORK/results"
  done
done
awk '{ split($3, kv, "="); tps[$2] += kv[2]; n[$2]++ }
  END {
    none = tps["none"] / n["none"]
    for (v in tps) printf "%-26s mean %.0f tps, ratio to none %.3f\n", v, tps[v] / n[v], tps[v] / n[v] / none
  }' "$WORK/results"
