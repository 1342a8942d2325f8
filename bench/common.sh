# Sourced by bench/compare.sh, bench/payouts.sh and bench/scaleout.sh (not run on its own):
# the tools they need, a fresh database and its cleanup, and the CPU accounting from /proc.
#
# The sourcing script sets PG_SERVER, may set KEEP=1 (keep the database and the work folder),
# appends the processes it starts to PIDS, and calls `bench_start` once before using the rest.
#
# BOUNCER=1: Cauri's processes reach the database through a PgBouncer of their own in
# transaction mode (tools/pgbouncer.sh, in front of PG_SERVER), with prepared statements off
# and the workers' LISTEN straight to PostgreSQL; the floor, pgbench, psql and the CPU
# accounting still go straight to PostgreSQL (DIRECT_URL).

NAME=$(basename "$0")

require() {  # tools...
  for tool in "$@"; do
    command -v "$tool" >/dev/null || {
      echo "$NAME: $tool is required (wrk: apt-get install -y wrk)" >&2
      exit 2
    }
  done
}

bench_start() {  # prefix: BIN (the venv's executables), WORK, DB, CAURI_DATABASE_URL, cleanup
  BIN="$(uv run --frozen python -c 'import os, sys; print(os.path.dirname(sys.executable))')"
  WORK="$(mktemp -d "/tmp/$1.XXXXXX")"
  DB="$1_$(date +%s)_$$"
  DIRECT_URL="$PG_SERVER/$DB"
  export CAURI_DATABASE_URL="$DIRECT_URL"
  PIDS=()
  HZ=$(getconf CLK_TCK)
  trap bench_cleanup EXIT
  if [[ "${BOUNCER:-0}" == 1 ]]; then
    source tools/pgbouncer.sh
    UPSTREAM=${PG_SERVER##*@} pgbouncer_start
    export CAURI_DATABASE_URL="postgresql://postgres@127.0.0.1:$PGBOUNCER_PORT/$DB"
    export CAURI_DATABASE_PREPARED_STATEMENTS=false CAURI_DATABASE_LISTEN_URL="$DIRECT_URL"
    echo "== through PgBouncer $(pgbouncer --version | head -1 | cut -d' ' -f2), port" \
      "$PGBOUNCER_PORT, transaction mode, pool of $PGBOUNCER_POOL_SIZE"
  fi
}

admin() { psql "$PG_SERVER/postgres" -qAtX -c "$1"; }
# DATABASE_SETTINGS="jit=off …": each a setting of the bench database (ALTER DATABASE … SET),
# for every connection made to it after.
create_database() {
  admin "CREATE DATABASE \"$DB\""
  for setting in ${DATABASE_SETTINGS:-}; do
    admin "ALTER DATABASE \"$DB\" SET ${setting%%=*} = '${setting#*=}'"
  done
}
query() { psql "$DIRECT_URL" -qAtX -c "$1"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# CPU time, which other work on the machine changes much less than req/s: "pid ticks" lines
# for the given processes, and the ticks they spent between two such snapshots. PostgreSQL's
# share is read from its backends' /proc entries: 0 when PG_SERVER is not on this machine.
ticks_of() { for pid in "$@"; do awk -v pid="$pid" '{print pid, $14 + $15}' "/proc/$pid/stat" 2>/dev/null || true; done; }
tree_of() { echo "$1" $(pgrep -P "$1" || true); }
# (bench/payouts.sh's sampler of pg_stat_activity is not the bench's work)
backends() { query "SELECT pid FROM pg_stat_activity WHERE datname = '$DB' AND pid <> pg_backend_pid() AND application_name <> 'bench_sampler'"; }
spent() { awk 'NR == FNR { before[$1] = $2; next } { total += $2 - before[$1] } END { print total + 0 }' <(echo "$1") <(echo "$2"); }
ms_per() { awk -v t="$1" -v n="$2" -v hz="$HZ" 'BEGIN { printf "%.2f", n ? t * 1000 / hz / n : 0 }'; }  # ticks count

bench_cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ -n "${PGBOUNCER_PID:-}" ]]; then
    # Its own CPU, apart from the servers' and PostgreSQL's: per transaction it carried.
    local xacts ticks
    xacts=$(psql "postgresql://postgres@127.0.0.1:$PGBOUNCER_PORT/pgbouncer" -qAtX -F ' ' \
      -c 'SHOW STATS' | awk -v db="$DB" '$1 == db { print $2 }')
    ticks=$(ticks_of "$PGBOUNCER_PID" | cut -d' ' -f2)
    echo "== PgBouncer, the whole bench (setup included): ${xacts:-0} transactions," \
      "CPU $(ms_per "${ticks:-0}" "${xacts:-0}") ms per transaction"
    pgbouncer_stop
  fi
  if [[ "${KEEP:-0}" == 1 ]]; then
    echo "kept: database $DB, work folder $WORK" >&2
  else
    admin "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" || true
    rm -rf "$WORK"
  fi
}

wait_ready() {  # port path: any HTTP answer to a POST on the path
  for _ in $(seq 240); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$1$2" || true)
    [[ "$code" != 000 ]] && return 0
    sleep 0.5
  done
  echo "$NAME: nothing answers on port $1 (logs in $WORK)" >&2
  exit 1
}

# The most backends of the bench database at once, sampled 5 times a second while a run
# lasts (through PgBouncer: its server connections).
connections_start() {  # file
  PGAPPNAME=bench_sampler psql "$DIRECT_URL" -qAtX >"$1" 2>/dev/null <<<"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() \\watch 0.2" &
  CONNECTIONS_SAMPLER=$!
}
connections_stop() {  # file: the peak
  kill "$CONNECTIONS_SAMPLER" 2>/dev/null || true
  wait "$CONNECTIONS_SAMPLER" 2>/dev/null || true
  sort -n "$1" | tail -1
}
