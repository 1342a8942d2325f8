#!/usr/bin/env bash
# Cauri's `POST /api/v1/payments` against the floor (bench/floor.py), issue 13.
#
#   bench/compare.sh            floor then Cauri, ROUNDS times, with one merchant and then with
#                               MERCHANTS merchants spread over the requests; ratios last
#   bench/compare.sh profile    py-spy on Cauri's server processes during one wrk run, and
#                               where the time goes (bench/top_frames.py; KEEP=1 keeps the
#                               collapsed stacks, for a flame graph)
#
# Needs wrk (Debian: apt-get install -y wrk), psql, curl and uv; installs nothing. A fresh
# database on PG_SERVER is created, migrated and dropped at the end (KEEP=1 keeps it and the
# work folder). Both servers run with 2 processes on the same database and the same settings:
# `cauri serve --workers 2 --no-worker` (the floor delivers no webhook either: their jobs
# stay queued in both cases) and `uvicorn --workers 2` for the floor. See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-compare}
PG_SERVER=${PG_SERVER:-postgresql://postgres@127.0.0.1:5432}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-2}
MERCHANTS=${MERCHANTS:-200}
FEE_PERCENT=${FEE_PERCENT:-1.5}             # a fee, so that a payment has three postings
WEBHOOK_URL=${WEBHOOK_URL:-https://receiver.invalid/cauri}  # "" : no delivery, no job
CAURI_PORT=${CAURI_PORT:-8801}
FLOOR_PORT=${FLOOR_PORT:-8802}
PY_SPY=${PY_SPY:-py-spy==0.4.3}
PROFILE_RATE=${PROFILE_RATE:-250}
PROFILE_ARGS=${PROFILE_ARGS:-}                # e.g. --gil: only samples holding the GIL

source bench/common.sh
require wrk psql curl uv
bench_start cauri_bench
export CAURI_RATE_LIMIT=1000000000/minute

pay_once() {  # port key: one payment, its reference
  curl -sf -H "Authorization: Bearer $2" -H 'Content-Type: application/json' \
    -d '{"amount": 1000, "operator": "mtn", "phone_number": "22997000000"}' \
    "http://127.0.0.1:$1/api/v1/payments" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["reference"])'
}

setup() {
  echo "== setup: database $DB, load $(load)"
  create_database
  "$BIN/cauri" migrate >/dev/null
  "$BIN/cauri" settings set --fee-percent "$FEE_PERCENT" >/dev/null
  "$BIN/cauri" merchants create --name bench --json \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["test_key"])' >"$WORK/one.keys"
  if [[ "$MODE" == compare ]]; then
    "$BIN/python" bench/seed_merchants.py "$MERCHANTS" >"$WORK/many.keys"
  fi
  "$BIN/cauri" serve --workers 2 --no-worker --port "$CAURI_PORT" >"$WORK/cauri.log" 2>&1 &
  PIDS+=($!)
  CAURI_PID=$!
  CAURI_DATABASE_URL="$DIRECT_URL" "$BIN/uvicorn" --app-dir bench floor:app --workers 2 \
    --port "$FLOOR_PORT" --no-access-log --log-level warning >"$WORK/floor.log" 2>&1 &
  PIDS+=($!)
  FLOOR_PID=$!
  wait_ready "$CAURI_PORT" /api/v1/payments
  wait_ready "$FLOOR_PORT" /api/v1/payments
  if [[ -n "$WEBHOOK_URL" ]]; then
    # Through Cauri's API, as a merchant would: every event of these merchants then gets a
    # delivery and a job, in both servers.
    cat "$WORK"/*.keys | while read -r key; do
      curl -sf -X PUT -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
        -d "{\"url\": \"$WEBHOOK_URL\"}" \
        "http://127.0.0.1:$CAURI_PORT/api/v1/webhooks/endpoint" >/dev/null
    done
  fi
}

parity() {  # the same rows, through either server, or stop
  local key
  key=$(head -1 "$WORK/one.keys")
  for server in cauri floor; do
    port=$([[ $server == cauri ]] && echo "$CAURI_PORT" || echo "$FLOOR_PORT")
    psql "$DIRECT_URL" -qX -v ref="$(pay_once "$port" "$key")" -f bench/parity.sql \
      >"$WORK/parity.$server"
  done
  if ! diff "$WORK/parity.cauri" "$WORK/parity.floor" >"$WORK/parity.diff"; then
    echo "compare.sh: the floor does not write what Cauri writes:" >&2
    cat "$WORK/parity.diff" >&2
    exit 1
  fi
  echo "== parity: one payment through each server wrote the same rows:"
  sed 's/^/   /' "$WORK/parity.cauri" | cut -c1-150
}

wrk_run() {  # port keys duration: the RESULT line
  BENCH_KEYS="$2" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$3" --timeout 10s --latency \
    -s bench/payments.lua "http://127.0.0.1:$1" | tee -a "$WORK/wrk.log" | grep '^RESULT'
}

measure() {  # variant server round port keys
  local before after line server_pid server_before pg_before server_ticks pg_ticks requests
  server_pid=$([[ $2 == cauri ]] && echo "$CAURI_PID" || echo "$FLOOR_PID")
  before=$(query "SELECT count(*) FROM payments")
  server_before=$(ticks_of $(tree_of "$server_pid"))
  pg_before=$(ticks_of $(backends))
  line=$(wrk_run "$4" "$5" "$DURATION")
  server_ticks=$(spent "$server_before" "$(ticks_of $(tree_of "$server_pid"))")
  pg_ticks=$(spent "$pg_before" "$(ticks_of $(backends))")
  after=$(query "SELECT count(*) FROM payments")
  requests=$((after - before))
  # CPU per payment written, in ms: the server's processes, and PostgreSQL's backends of the
  # bench database (not its WAL writer or checkpointer).
  echo "$1 $2 $3 ${line#RESULT } rows=$requests" \
    "server_cpu_ms=$(ms_per "$server_ticks" "$requests")" "pg_cpu_ms=$(ms_per "$pg_ticks" "$requests")" \
    "load=$(load | tr ' ' /)" | tee -a "$WORK/results"
}

compare() {
  setup
  parity
  for variant in one many; do
    keys="$WORK/$variant.keys"
    echo "== $variant: $(wc -l <"$keys") merchant(s); warm-up $WARMUP each, load $(load)"
    wrk_run "$FLOOR_PORT" "$keys" "$WARMUP" >/dev/null
    wrk_run "$CAURI_PORT" "$keys" "$WARMUP" >/dev/null
    for round in $(seq "$ROUNDS"); do
      measure "$variant" floor "$round" "$FLOOR_PORT" "$keys"
      measure "$variant" cauri "$round" "$CAURI_PORT" "$keys"
    done
  done
  echo
  echo "== wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $(nproc) cores, $(date -u '+%F %H:%M UTC')"
  # Ratios last: per variant, Cauri's throughput over the floor's (mean of the rounds, and
  # round by round), the p99 of each; then Cauri with one merchant over Cauri with many.
  awk '
    function field(name,   i, kv) {
      for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == name) return kv[2] }
    }
    {
      key = $1 " " $2; rps[key] += field("rps"); n[key]++
      p99[key] = p99[key] sprintf(" %.1f", field("p99_ms"))
      errors[key] += field("non2xx") + field("socket_errors")
      srv[key] += field("server_cpu_ms"); pg[key] += field("pg_cpu_ms")
      by_round[$1 " " $3 " " $2] = field("rps")
    }
    END {
      for (v = 1; v <= 2; v++) {
        variant = v == 1 ? "one" : "many"
        f = rps[variant " floor"] / n[variant " floor"]
        c = rps[variant " cauri"] / n[variant " cauri"]
        rounds = ""
        for (r = 1; r <= n[variant " cauri"]; r++)
          rounds = rounds sprintf(" %.2f", by_round[variant " " r " cauri"] / by_round[variant " " r " floor"])
        printf "%-4s merchant(s): floor %.0f req/s (p99 ms:%s), cauri %.0f req/s (p99 ms:%s), errors floor %d cauri %d\n", \
          variant, f, p99[variant " floor"], c, p99[variant " cauri"], errors[variant " floor"], errors[variant " cauri"]
        printf "%-4s CPU ms per payment: floor server %.2f + PostgreSQL %.2f, cauri server %.2f + PostgreSQL %.2f\n", \
          variant, srv[variant " floor"] / n[variant " floor"], pg[variant " floor"] / n[variant " floor"], \
          srv[variant " cauri"] / n[variant " cauri"], pg[variant " cauri"] / n[variant " cauri"]
        printf "%-4s RATIO cauri/floor throughput %.3f (rounds:%s)   target >= 0.5, cauri p99 <= 40 ms\n", \
          variant, c / f, rounds
        mean[variant] = c
      }
      printf "RATIO cauri one merchant / many merchants %.3f   target >= 0.9\n", mean["one"] / mean["many"]
    }' "$WORK/results"
}

profile() {
  setup
  local keys="$WORK/one.keys" seconds=${DURATION%s}
  echo "== profile: warm-up $WARMUP, then py-spy ($PY_SPY, ${PROFILE_RATE} Hz) on the server"
  echo "   processes of cauri serve (pid $CAURI_PID and its children) during wrk -d$DURATION"
  wrk_run "$CAURI_PORT" "$keys" "$WARMUP" >/dev/null
  uvx --from "$PY_SPY" py-spy record --pid "$CAURI_PID" --subprocesses --nonblocking \
    --rate "$PROFILE_RATE" $PROFILE_ARGS --duration "$((seconds + 1))" --format raw \
    -o "$WORK/cauri.collapsed" >"$WORK/py-spy.log" 2>&1 &
  local spy=$!
  sleep 1
  wrk_run "$CAURI_PORT" "$keys" "$DURATION"
  wait "$spy" || { cat "$WORK/py-spy.log" >&2; exit 1; }
  "$BIN/python" bench/top_frames.py "$WORK/cauri.collapsed"
  echo "load $(load)"
}

case "$MODE" in
  compare) compare ;;
  profile) profile ;;
  *) echo "usage: bench/compare.sh [compare|profile]" >&2; exit 2 ;;
esac
