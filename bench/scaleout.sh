#!/usr/bin/env bash
# Scale-out (issue 13): N API processes + N workers against 1 + 1, on the same PostgreSQL,
# rate limits shared through Redis. See bench/README.md.
#
#   bench/scaleout.sh     for 1 + 1 then 2 + 2 (`SCALES`), ROUNDS times: `cauri serve
#                         --workers N --no-worker` and N `cauri worker`; wrk with
#                         bench/payments.lua over MERCHANTS merchants while the workers
#                         deliver the payments' webhooks to a receiver on loopback; payments/s,
#                         deliveries/s, the CPU of each kind of process and the most
#                         connections to PostgreSQL at once; ratios last
#
# Needs wrk, psql, curl, redis-cli and uv; installs nothing. A fresh database on PG_SERVER
# (dropped at the end, KEEP=1 keeps it) and an empty Redis database (the first empty one of
# 1..15 on REDIS, unless REDIS_DB is given; its keys are the rate limiter's, which expire
# with their window). Every merchant's webhook endpoint is the receiver of bench/bench_webhooks.py
# (its own process, 200 at once), allowed on loopback by CAURI_WEBHOOK_ALLOW_PRIVATE=1;
# one endpoint per merchant, since deliveries to one endpoint are capped
# (CAURI_WEBHOOK_ENDPOINT_CONCURRENCY).
set -euo pipefail
cd "$(dirname "$0")/.."

PG_SERVER=${PG_SERVER:-postgresql://postgres@127.0.0.1:5432}
REDIS=${REDIS:-redis://127.0.0.1:6379}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-1}
SCALES=${SCALES:-1 2}
MERCHANTS=${MERCHANTS:-200}
FEE_PERCENT=${FEE_PERCENT:-1.5}
DRAIN=${DRAIN:-60}                 # seconds to wait for the webhook backlog before a run
CAURI_PORT=${CAURI_PORT:-8821}
RECEIVER_PORT=${RECEIVER_PORT:-8822}
# Per worker process; the default 32 would take up to 40 pooled connections each from a
# PostgreSQL that other work shares (max_connections).
export CAURI_WORKER_CONCURRENCY=${CAURI_WORKER_CONCURRENCY:-16}

source bench/common.sh
require wrk psql curl redis-cli uv
bench_start cauri_scaleout
export CAURI_RATE_LIMIT=1000000000/minute
export CAURI_WEBHOOK_ALLOW_PRIVATE=1
SECONDS_RUN=${DURATION%s}

redis_db() {  # the first empty database of the Redis server
  for n in $(seq 1 15); do
    if [[ "$(redis-cli -u "$REDIS/$n" dbsize)" == 0 ]]; then
      echo "$n"
      return
    fi
  done
  echo "scaleout.sh: no empty Redis database on $REDIS (set REDIS_DB)" >&2
  exit 1
}
export CAURI_REDIS_URL="$REDIS/${REDIS_DB:-$(redis_db)}"

setup() {
  echo "== setup: database $DB, Redis $CAURI_REDIS_URL, load $(load)"
  create_database
  "$BIN/cauri" migrate >/dev/null
  "$BIN/cauri" settings set --fee-percent "$FEE_PERCENT" >/dev/null
  "$BIN/python" bench/seed_merchants.py "$MERCHANTS" >"$WORK/keys"
  "$BIN/python" -c 'import sys; sys.path.insert(0, "bench")
from bench_webhooks import receiver_main
receiver_main(int(sys.argv[1]))' "$RECEIVER_PORT" >"$WORK/receiver.log" 2>&1 &
  PIDS+=($!)
  RECEIVER_PID=$!
  # Before any endpoint points at it: a refused delivery is retried only 10 s later, and
  # refusals trip the endpoint's circuit breaker.
  for _ in $(seq 120); do
    delivered >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "scaleout.sh: the receiver does not answer on port $RECEIVER_PORT" >&2
  exit 1
}

start() {  # scale: N server processes and N workers
  "$BIN/cauri" serve --workers "$1" --no-worker --port "$CAURI_PORT" >>"$WORK/cauri.log" 2>&1 &
  PIDS+=($!)
  SERVER_PID=$!
  WORKER_PIDS=()
  for _ in $(seq "$1"); do
    "$BIN/cauri" worker >>"$WORK/worker.log" 2>&1 &
    PIDS+=($!)
    WORKER_PIDS+=($!)
  done
  wait_ready "$CAURI_PORT" /api/v1/payments
}

stop() {
  kill "$SERVER_PID" "${WORKER_PIDS[@]}"
  wait "$SERVER_PID" "${WORKER_PIDS[@]}" 2>/dev/null || true
}

endpoints() {  # through Cauri's API, as a merchant would
  while read -r key; do
    curl -sf -X PUT -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
      -d "{\"url\": \"http://127.0.0.1:$RECEIVER_PORT/hook\"}" \
      "http://127.0.0.1:$CAURI_PORT/api/v1/webhooks/endpoint" >/dev/null
  done <"$WORK/keys"
}

pct() { ms_per "$1" "$2" | awk '{ printf "%.0f", $1 / 10 }'; }  # ticks seconds: % of one core

delivered() { curl -sf "http://127.0.0.1:$RECEIVER_PORT/count"; }
backlog() { query "SELECT count(*) FROM jobs WHERE lane LIKE 'webhooks%' AND status IN ('queued', 'running')"; }

drain() {
  for _ in $(seq "$DRAIN"); do
    (($(backlog) == 0)) && return 0
    sleep 1
  done
  echo "   (backlog of $(backlog) webhook jobs left after ${DRAIN} s)"
}

measure() {  # scale round
  local line before after sent got api_before worker_before pg_before receiver_before
  local api worker pg receiver wall peak
  before=$(query "SELECT count(*) FROM payments")
  sent=$(delivered)
  api_before=$(ticks_of $(tree_of "$SERVER_PID"))
  worker_before=$(ticks_of "${WORKER_PIDS[@]}")
  pg_before=$(ticks_of $(backends))
  receiver_before=$(ticks_of "$RECEIVER_PID")
  connections_start "$WORK/connections.$1.$2"
  line=$(BENCH_KEYS="$WORK/keys" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --timeout 10s \
    --latency -s bench/payments.lua "http://127.0.0.1:$CAURI_PORT" | tee -a "$WORK/wrk.log" \
    | grep '^RESULT')
  api=$(spent "$api_before" "$(ticks_of $(tree_of "$SERVER_PID"))")
  worker=$(spent "$worker_before" "$(ticks_of "${WORKER_PIDS[@]}")")
  pg=$(spent "$pg_before" "$(ticks_of $(backends))")
  receiver=$(spent "$receiver_before" "$(ticks_of "$RECEIVER_PID")")
  peak=$(connections_stop "$WORK/connections.$1.$2")
  got=$(($(delivered) - sent))
  after=$(query "SELECT count(*) FROM payments")
  wall=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^seconds=/) { sub("seconds=", "", $i); print $i } }' <<<"$line")
  # Per payment written: ms of CPU of each kind of process; and each kind's share of the
  # machine's CPU during the run (100 % = one core).
  echo "$1+$1 $2 ${line#RESULT } rows=$((after - before)) delivered=$got" \
    "deliveries_per_s=$(awk -v n="$got" -v s="$wall" 'BEGIN { printf "%.1f", n / s }')" \
    "backlog_after=$(backlog)" \
    "api_ms=$(ms_per "$api" "$((after - before))") worker_ms=$(ms_per "$worker" "$((after - before))")" \
    "pg_ms=$(ms_per "$pg" "$((after - before))") receiver_ms=$(ms_per "$receiver" "$((after - before))")" \
    "cpu_pct=api:$(pct "$api" "$wall")/worker:$(pct "$worker" "$wall")/pg:$(pct "$pg" "$wall")/receiver:$(pct "$receiver" "$wall")" \
    "pg_connections_max=$peak$(bouncer_clients)" "load=$(load | tr ' ' /)" | tee -a "$WORK/results"
}

bouncer_clients() {  # through PgBouncer: the connections Cauri's processes hold to it
  [[ -n "${PGBOUNCER_PORT:-}" ]] || return 0
  psql "postgresql://postgres@127.0.0.1:$PGBOUNCER_PORT/pgbouncer" -qAtX -F ' ' -c 'SHOW POOLS' \
    | awk -v db="$DB" '$1 == db { n += $3 + $4 } END { printf " bouncer_clients=%d", n }'
}

main() {
  setup
  local first=1
  for round in $(seq "$ROUNDS"); do
    for scale in $SCALES; do
      start "$scale"
      if ((first)); then
        endpoints
        first=0
      fi
      echo "== $scale API process(es) + $scale worker(s), round $round: warm-up $WARMUP," \
        "then the webhook backlog drained; load $(load)"
      BENCH_KEYS="$WORK/keys" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" \
        -s bench/payments.lua "http://127.0.0.1:$CAURI_PORT" >/dev/null
      drain
      measure "$scale" "$round"
      stop
    done
  done
  echo
  echo "== wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $MERCHANTS merchants, $(nproc) cores," \
    "$(date -u '+%F %H:%M UTC')"
  awk '
    function field(name,   i, kv) {
      for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == name) return kv[2] }
    }
    { rps[$1] += field("rps"); n[$1]++; dps[$1] += field("deliveries_per_s")
      p99[$1] = p99[$1] sprintf(" %.1f", field("p99_ms")); errors[$1] += field("non2xx") + field("socket_errors")
      api[$1] += field("api_ms"); worker[$1] += field("worker_ms"); pg[$1] += field("pg_ms")
      if (field("pg_connections_max") > peak[$1]) peak[$1] = field("pg_connections_max") }
    END {
      for (s in rps) {
        printf "%s: %.0f payments/s (p99 ms:%s), %.0f deliveries/s during the run, errors %d; CPU ms per payment: API %.2f, workers %.2f, PostgreSQL %.2f; at most %d connections to PostgreSQL\n", \
          s, rps[s] / n[s], p99[s], dps[s] / n[s], errors[s], api[s] / n[s], worker[s] / n[s], pg[s] / n[s], peak[s]
      }
      if (n["1+1"] && n["2+2"])
        printf "RATIO 2+2 / 1+1: payments %.3f, deliveries %.3f\n", \
          (rps["2+2"] / n["2+2"]) / (rps["1+1"] / n["1+1"]), (dps["2+2"] / n["2+2"]) / (dps["1+1"] / n["1+1"])
    }' "$WORK/results"
}

main
