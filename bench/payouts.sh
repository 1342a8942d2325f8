#!/usr/bin/env bash
# Payouts from one merchant's balance against PostgreSQL alone updating one row per
# transaction (issue 13: >= 0.8 x, never overdrawn). See bench/README.md.
#
#   bench/payouts.sh            Cauri's POST /api/v1/payouts from one merchant (wrk), the
#                               floor's (bench/floor.py: the same payout in one statement,
#                               FLOOR=0 skips it) from the same balance, pgbench debiting one
#                               row, pgbench making the floor's payout (bench/pgbench_payout.py),
#                               then Cauri's payouts from MERCHANTS merchants' balances
#                               in turn, ROUNDS times; then a merchant
#                               whose balance runs out during the run (most requests refused
#                               with 402 insufficient_funds); the ledger checks; ratios last
#   bench/payouts.sh profile    py-spy on Cauri's server processes during one payouts run
#   bench/payouts.sh trips      the SQL round trips of one payout, and those made while the
#                               balance's row is locked (bench/payout_trips.py)
#
# Needs wrk, pgbench, psql, curl and uv; installs nothing. A fresh database on PG_SERVER is
# created, migrated and dropped at the end (KEEP=1 keeps it). `cauri serve --workers 2
# --no-worker`: a test payout to a number ending in 0000 is paid inside its request (the
# simulator decides offline), so no job of the payout is left for a worker; the only jobs
# are the webhook deliveries of `payout.succeeded`, written in the payout's transaction and
# left queued, as bench/compare.sh leaves the payments' ones (the webhook pipeline has its
# own bench). pgbench runs against the same server and database, with as many connections
# as wrk and as many threads.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-compare}
PG_SERVER=${PG_SERVER:-postgresql://postgres@127.0.0.1:5432}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-2}
AMOUNT=${AMOUNT:-1000}                       # XOF the beneficiary receives, per payout
PAYOUT_FEE_PERCENT=${PAYOUT_FEE_PERCENT:-1}  # a fee, so that a payout has three postings
CREDIT=${CREDIT:-100000000}                  # the merchant's balance: never runs out
SMALL_CREDIT=${SMALL_CREDIT:-101050}         # runs out: 100 payouts of 1,010, 50 left
MERCHANTS=${MERCHANTS:-200}                  # the many balances' run (0: none)
FLOOR=${FLOOR:-1}                            # the floor's payouts from one balance (0: none)
WEBHOOK_URL=${WEBHOOK_URL:-https://receiver.invalid/cauri}  # "" : no delivery, no job
PGBENCH_ARGS=${PGBENCH_ARGS:--M prepared}
CAURI_PORT=${CAURI_PORT:-8811}
PY_SPY=${PY_SPY:-py-spy==0.4.3}
PROFILE_RATE=${PROFILE_RATE:-250}
PROFILE_ARGS=${PROFILE_ARGS:-}

source bench/common.sh
require wrk pgbench psql curl uv
bench_start cauri_payouts
export CAURI_RATE_LIMIT=1000000000/minute
SECONDS_RUN=${DURATION%s}

# What the backends of the bench database are doing, 5 times a second, while a run lasts:
# waiting for a lock, running a statement, or idle inside a transaction (waiting for their
# client's next statement: a round trip).
SAMPLE="SELECT count(*) FILTER (WHERE wait_event_type = 'Lock'),
  count(*) FILTER (WHERE state = 'active' AND wait_event_type IS DISTINCT FROM 'Lock'),
  count(*) FILTER (WHERE state LIKE 'idle in transaction%'),
  coalesce(string_agg(translate(split_part(query, ' ', 1) || '_' || split_part(query, ' ', 2),
    ',;|', ''), ';') FILTER (WHERE wait_event_type = 'Lock'), '-')
  FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"

sampler_start() {  # file
  PGAPPNAME=bench_sampler psql "$DIRECT_URL" -qAtX -F '|' >"$1" 2>/dev/null \
    <<<"$SAMPLE \\watch 0.2" &
  SAMPLER=$!
}
sampler_stop() {  # file: mean backends waiting for a lock, running, idle in a transaction;
  # the statements that waited most often
  kill "$SAMPLER" 2>/dev/null || true
  wait "$SAMPLER" 2>/dev/null || true
  awk -F'|' 'NF >= 4 { n++; w += $1; a += $2; i += $3; k = split($4, q, ";"); for (j = 1; j <= k; j++) if (q[j] != "-") waits[q[j]]++ }
    END { top = ""; for (s in waits) top = top sprintf("%s:%.1f,", s, waits[s] / n)
      printf "lock_wait=%.1f running=%.1f idle_in_tx=%.1f waiting_in=%s", w / n, a / n, i / n, top == "" ? "-" : top }' "$1"
}

setup() {
  echo "== setup: database $DB, load $(load)"
  create_database
  "$BIN/cauri" migrate >/dev/null
  "$BIN/cauri" settings set --payout-fee-percent "$PAYOUT_FEE_PERCENT" >/dev/null
  for merchant in big small; do
    "$BIN/cauri" merchants create --name "payouts $merchant" --json \
      | python3 -c 'import json, sys; m = json.load(sys.stdin); print(m["id"], m["test_key"])' \
        >"$WORK/$merchant"
  done
  read -r BIG_ID BIG_KEY <"$WORK/big"
  read -r SMALL_ID SMALL_KEY <"$WORK/small"
  "$BIN/cauri" merchants credit "$BIG_ID" --mode test --amount "$CREDIT" --reason bench >/dev/null
  "$BIN/cauri" merchants credit "$SMALL_ID" --mode test --amount "$SMALL_CREDIT" \
    --reason bench >/dev/null
  : >"$WORK/many.keys"
  if ((MERCHANTS > 0)); then
    "$BIN/python" bench/seed_merchants.py "$MERCHANTS" "$CREDIT" >"$WORK/many.keys"
  fi
  "$BIN/python" bench/pgbench_payout.py "$(printf %s "$BIG_KEY" | sha256sum | cut -d' ' -f1)" \
    "$AMOUNT" >"$WORK/payout.sql"
  query "CREATE TABLE bench_one_row (id int PRIMARY KEY, balance bigint NOT NULL);
    INSERT INTO bench_one_row VALUES (1, 1000000000000)"
}

serve() {
  "$BIN/cauri" serve --workers 2 --no-worker --port "$CAURI_PORT" >"$WORK/cauri.log" 2>&1 &
  PIDS+=($!)
  SERVER_PID=$!
  wait_ready "$CAURI_PORT" /api/v1/payouts
  if [[ -n "$WEBHOOK_URL" ]]; then
    for key in "$BIG_KEY" "$SMALL_KEY" $(cat "$WORK/many.keys"); do
      curl -sf -X PUT -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
        -d "{\"url\": \"$WEBHOOK_URL\"}" \
        "http://127.0.0.1:$CAURI_PORT/api/v1/webhooks/endpoint" >/dev/null
    done
  fi
}

floor_serve() {  # bench/floor.py on Cauri's port: the webhook endpoints serve() set stay
  CAURI_DATABASE_URL="$DIRECT_URL" "$BIN/uvicorn" --app-dir bench floor:app --workers 2 \
    --port "$CAURI_PORT" --no-access-log --log-level warning >"$WORK/floor.log" 2>&1 &
  PIDS+=($!)
  SERVER_PID=$!
  wait_ready "$CAURI_PORT" /api/v1/payouts
}

wrk_run() {  # key run duration [key file]: the RESULT line
  BENCH_KEY="$1" BENCH_RUN="$2" BENCH_AMOUNT="$AMOUNT" BENCH_KEYS="${4:-}" wrk -t"$THREADS" -c"$CONNECTIONS" \
    -d"$3" --timeout 10s --latency -s bench/payouts.lua "http://127.0.0.1:$CAURI_PORT" \
    | tee -a "$WORK/wrk.log" | grep '^RESULT'
}

measure() {  # variant server round key [key file]
  local line server_before pg_before server_ticks pg_ticks requests
  server_before=$(ticks_of $(tree_of "$SERVER_PID"))
  pg_before=$(ticks_of $(backends))
  sampler_start "$WORK/sample.$1.$2.$3"
  line=$(wrk_run "$4" "$1-$2-$3" "$DURATION" "${5:-}")
  server_ticks=$(spent "$server_before" "$(ticks_of $(tree_of "$SERVER_PID"))")
  pg_ticks=$(spent "$pg_before" "$(ticks_of $(backends))")
  requests=$(awk '{ split($2, kv, "="); print kv[2] }' <<<"$line")
  # CPU per request answered, in ms: the server's processes, and PostgreSQL's backends of the
  # bench database (not its WAL writer or checkpointer).
  echo "$1 $2 $3 ${line#RESULT } server_cpu_ms=$(ms_per "$server_ticks" "$requests")" \
    "pg_cpu_ms=$(ms_per "$pg_ticks" "$requests") $(sampler_stop "$WORK/sample.$1.$2.$3")" \
    "load=$(load | tr ' ' /)" | tee -a "$WORK/results"
}

free_connections() {
  admin "SELECT current_setting('max_connections')::int - count(*) FROM pg_stat_activity"
}

wait_for_connections() {  # count: PostgreSQL is shared; wait (up to a minute) for free slots
  for _ in $(seq 60); do
    (($(free_connections) >= $1)) && return 0
    sleep 1
  done
  echo "payouts.sh: fewer than $1 free connections on $PG_SERVER for a minute" >&2
  exit 1
}

balance_now() { query "SELECT balance FROM bench_one_row WHERE id = 1"; }

measure_pgbench() {  # round
  # pgbench's backends live only while it runs: it runs 2 s longer than DURATION, and the
  # window is read in the middle (balance and the backends' CPU at its two ends), so that
  # connecting and disconnecting are outside it; the balance drops by 1 per transaction.
  wait_for_connections "$((CONNECTIONS + 5))"
  pgbench -n -f bench/pgbench_one_row.sql -c "$CONNECTIONS" -j "$THREADS" \
    -T "$((SECONDS_RUN + 2))" $PGBENCH_ARGS "$DIRECT_URL" >"$WORK/pgbench.$1" 2>&1 &
  local bench=$! first pg_before pg_ticks client_before client_ticks started ended last done
  sleep 1
  first=$(balance_now)
  pg_before=$(ticks_of $(backends))
  client_before=$(ticks_of "$bench")
  started=$(date +%s.%N)
  sampler_start "$WORK/sample.pgbench.$1"
  sleep "$SECONDS_RUN"
  pg_ticks=$(spent "$pg_before" "$(ticks_of $(backends))")
  client_ticks=$(spent "$client_before" "$(ticks_of "$bench")")
  last=$(balance_now)
  ended=$(date +%s.%N)
  wait "$bench"
  done=$((first - last))
  echo "one-row pgbench $1 tx=$done seconds=$(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.2f", b - a }')" \
    "tps=$(awk -v n="$done" -v a="$started" -v b="$ended" 'BEGIN { printf "%.1f", n / (b - a) }')" \
    "pgbench_tps=$(awk '/^tps/ { print $3; exit }' "$WORK/pgbench.$1")" \
    "latency_ms=$(awk '/^latency average/ { print $4; exit }' "$WORK/pgbench.$1")" \
    "client_cpu_ms=$(ms_per "$client_ticks" "$done") pg_cpu_ms=$(ms_per "$pg_ticks" "$done")" \
    "$(sampler_stop "$WORK/sample.pgbench.$1") load=$(load | tr ' ' /)" | tee -a "$WORK/results"
}

measure_pgbench_payout() {  # round: the floor's payout statement, PostgreSQL alone
  wait_for_connections "$((CONNECTIONS + 5))"
  local before after
  before=$(query "SELECT count(*) FROM payouts")
  pgbench -n -f "$WORK/payout.sql" -c "$CONNECTIONS" -j "$THREADS" -T "$SECONDS_RUN" \
    -M prepared "$DIRECT_URL" >"$WORK/pgbench-payout.$1" 2>&1
  after=$(query "SELECT count(*) FROM payouts")
  echo "payout pgbench $1 payouts=$((after - before))" \
    "tps=$(awk '/^tps/ { print $3; exit }' "$WORK/pgbench-payout.$1")" \
    "failed=$(awk '/failed transactions/ { print $5; exit }' "$WORK/pgbench-payout.$1")" \
    "load=$(load | tr ' ' /)" | tee -a "$WORK/results"
}

check() {  # merchant credited (minor units)
  psql "$DIRECT_URL" -qAtX -v merchant="$1" -v credited="$2" -f bench/payouts_check.sql \
    | tee -a "$WORK/checks" | sed 's/^/   /'
  if grep -q '|f$' "$WORK/checks"; then
    echo "payouts.sh: a ledger check failed" >&2
    exit 1
  fi
}

serve_stop() {  # PostgreSQL is shared: the server's pooled connections are given back
  kill "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
}

compare() {
  setup
  # The server is started for each Cauri run and stopped before pgbench, so that pgbench
  # finds its connections on a PostgreSQL whose max_connections others share; a fresh
  # server is warmed up first.
  for round in $(seq "$ROUNDS"); do
    serve
    echo "== round $round: one merchant, balance $CREDIT XOF, warm-up $WARMUP, load $(load)"
    wrk_run "$BIG_KEY" "warmup-$round" "$WARMUP" >/dev/null
    measure one cauri "$round" "$BIG_KEY"
    serve_stop
    if ((FLOOR)); then
      floor_serve
      echo "== round $round: the floor (bench/floor.py), one merchant, load $(load)"
      wrk_run "$BIG_KEY" "warmup-floor-$round" "$WARMUP" >/dev/null
      measure one floor "$round" "$BIG_KEY"
      serve_stop
    fi
    measure_pgbench "$round"
    if ((FLOOR)); then
      measure_pgbench_payout "$round"
    fi
    if ((MERCHANTS > 0)); then
      serve
      echo "== round $round: $MERCHANTS merchants' balances in turn, warm-up $WARMUP, load $(load)"
      wrk_run "" "warmup-many-$round" "$WARMUP" "$WORK/many.keys" >/dev/null
      measure many cauri "$round" "" "$WORK/many.keys"
      serve_stop
    fi
  done
  serve
  echo "== a balance that runs out: $SMALL_CREDIT XOF, load $(load)"
  wrk_run "$BIG_KEY" warmup-short "$WARMUP" >/dev/null
  measure short cauri 1 "$SMALL_KEY"
  serve_stop
  echo "== ledger checks (bench/payouts_check.sql): the merchant that never ran out"
  check "$BIG_ID" "$CREDIT"
  echo "== the merchant whose balance ran out"
  check "$SMALL_ID" "$SMALL_CREDIT"
  echo
  echo "== wrk -t$THREADS -c$CONNECTIONS -d$DURATION and pgbench -c$CONNECTIONS -j$THREADS" \
    "$PGBENCH_ARGS, $(nproc) cores, $(date -u '+%F %H:%M UTC')"
  awk '
    function field(name,   i, kv) {
      for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == name) return kv[2] }
    }
    $1 == "payout" { p += field("tps"); np++; pf += field("failed") }
    $1 == "one" && $2 == "floor" { f += field("paid") / field("seconds"); nf++; fp99 = fp99 sprintf(" %.1f", field("p99_ms"))
      ferrors += field("other") + field("socket_errors") + field("refused")
      fsrv += field("server_cpu_ms"); fpg += field("pg_cpu_ms"); fw += field("lock_wait") }
    $1 == "one" && $2 == "cauri" { c += field("paid") / field("seconds"); nc++; p99 = p99 sprintf(" %.1f", field("p99_ms"))
      errors += field("other") + field("socket_errors") + field("refused")
      srv += field("server_cpu_ms"); cpg += field("pg_cpu_ms"); cw += field("lock_wait"); ci += field("idle_in_tx")
      rounds[nc] = field("paid") / field("seconds") }
    $1 == "many" { m += field("paid") / field("seconds"); nm++; mp99 = mp99 sprintf(" %.1f", field("p99_ms"))
      merrors += field("other") + field("socket_errors") + field("refused")
      msrv += field("server_cpu_ms"); mpg += field("pg_cpu_ms") }
    $1 == "one-row" { b += field("tps"); nb++; bpg += field("pg_cpu_ms"); bcl += field("client_cpu_ms"); bw += field("lock_wait")
      base[nb] = field("tps") }
    $1 == "short" { short = sprintf("paid %d, refused %d (402), other %d, %.0f answers/s, p99 %.1f ms, server %.2f + PostgreSQL %.2f ms CPU per answer", \
      field("paid"), field("refused"), field("other") + field("socket_errors"), field("rps"), field("p99_ms"), field("server_cpu_ms"), field("pg_cpu_ms")) }
    END {
      for (r = 1; r <= nc; r++) by_round = by_round sprintf(" %.2f", rounds[r] / base[r])
      printf "payouts/s (one merchant): %.0f (p99 ms:%s), answers other than 201: %d\n", c / nc, p99, errors
      printf "one-row pgbench tps: %.0f\n", b / nb
      printf "CPU ms per payout: server %.2f + PostgreSQL %.2f; per one-row transaction: pgbench %.2f + PostgreSQL %.2f\n", \
        srv / nc, cpg / nc, bcl / nb, bpg / nb
      printf "backends waiting for a lock (mean of samples): payouts %.1f of %d, pgbench %.1f; idle in a transaction (payouts): %.1f\n", \
        cw / nc, '"$CONNECTIONS"', bw / nb, ci / nc
      if (nm) printf "payouts/s (%d balances in turn): %.0f (p99 ms:%s), answers other than 201: %d; CPU ms per payout: server %.2f + PostgreSQL %.2f\n", \
        '"$MERCHANTS"', m / nm, mp99, merrors, msrv / nm, mpg / nm
      printf "balance that runs out: %s\n", short
      if (nf) printf "floor payouts/s (one merchant): %.0f (p99 ms:%s), answers other than 201: %d; CPU ms per payout: server %.2f + PostgreSQL %.2f; backends waiting for a lock %.1f\n", \
        f / nf, fp99, ferrors, fsrv / nf, fpg / nf, fw / nf
      if (np) printf "PostgreSQL alone making the floor'"'"'s payout from one balance (pgbench): %.0f tps (failed transactions: %d)\n", p / np, pf
      if (np) printf "RATIO whole payouts by PostgreSQL alone / one-row pgbench %.3f (the database'"'"'s own bound)\n", (p / np) / (b / nb)
      if (nf) printf "RATIO floor payouts / one-row pgbench %.3f (what any HTTP server reaches here)\n", (f / nf) / (b / nb)
      if (nf) printf "RATIO cauri / floor payouts (one balance) %.3f\n", (c / nc) / (f / nf)
      if (nm) printf "RATIO payouts one balance / many balances %.3f (the balance row'"'"'s own cost)\n", (c / nc) / (m / nm)
      printf "RATIO payouts / one-row pgbench %.3f (rounds:%s)   target >= 0.8\n", (c / nc) / (b / nb), by_round
    }' "$WORK/results"
}

profile() {
  setup
  serve
  echo "== profile: warm-up $WARMUP, then py-spy ($PY_SPY, ${PROFILE_RATE} Hz) on the server"
  echo "   processes of cauri serve (pid $SERVER_PID and its children) during wrk -d$DURATION"
  wrk_run "$BIG_KEY" warmup "$WARMUP" >/dev/null
  uvx --from "$PY_SPY" py-spy record --pid "$SERVER_PID" --subprocesses --nonblocking \
    --rate "$PROFILE_RATE" $PROFILE_ARGS --duration "$((SECONDS_RUN + 1))" --format raw \
    -o "$WORK/cauri.collapsed" >"$WORK/py-spy.log" 2>&1 &
  local spy=$!
  sleep 1
  wrk_run "$BIG_KEY" profile "$DURATION"
  wait "$spy" || { cat "$WORK/py-spy.log" >&2; exit 1; }
  "$BIN/python" bench/top_frames.py "$WORK/cauri.collapsed"
  echo "load $(load)"
}

trips() {
  setup
  "$BIN/python" bench/payout_trips.py --key "$BIG_KEY" --amount "$AMOUNT" \
    --webhook-url "$WEBHOOK_URL"
}

case "$MODE" in
  compare) compare ;;
  profile) profile ;;
  trips) trips ;;
  *) echo "usage: bench/payouts.sh [compare|profile|trips]" >&2; exit 2 ;;
esac
