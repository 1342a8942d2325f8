# Sourced by tools/through-pgbouncer and bench/common.sh (not run on its own): a PgBouncer in
# transaction mode on a free loopback port, in front of the PostgreSQL at UPSTREAM
# (host:port, 127.0.0.1:5432 by default, trust authentication), for any database of that
# server: its `*` entry reaches a database created after it started, so a test session's or a
# bench's own database needs no entry of its own.
#
# `pgbouncer_start` sets PGBOUNCER_PORT and PGBOUNCER_PID; `pgbouncer_stop` ends it and
# removes its folder. PgBouncer refuses to run as root: run as root, it runs as the embedded
# PostgreSQL's system account (cauri.kit.embedded_pg.SERVER_ACCOUNT, made when missing), and
# Debian's package is installed when missing.

UPSTREAM=${UPSTREAM:-127.0.0.1:5432}
# Server connections per database and user: what PostgreSQL sees, whatever the clients.
PGBOUNCER_POOL_SIZE=${PGBOUNCER_POOL_SIZE:-20}

pgbouncer_start() {
  if ! command -v pgbouncer >/dev/null; then
    [[ $(id -u) == 0 ]] || { echo "pgbouncer is required (apt-get install -y pgbouncer)" >&2; exit 2; }
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer) >/dev/null
  fi
  PGBOUNCER_DIR=$(mktemp -d /tmp/cauri-pgbouncer.XXXXXX)
  PGBOUNCER_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # trust still asks that the user be listed.
  echo '"postgres" ""' >"$PGBOUNCER_DIR/users.txt"
  cat >"$PGBOUNCER_DIR/pgbouncer.ini" <<INI
[databases]
* = host=${UPSTREAM%:*} port=${UPSTREAM##*:}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGBOUNCER_PORT
unix_socket_dir = $PGBOUNCER_DIR
auth_type = trust
auth_file = $PGBOUNCER_DIR/users.txt
admin_users = postgres
pool_mode = transaction
default_pool_size = $PGBOUNCER_POOL_SIZE
max_client_conn = 5000
INI
  local as=()
  if [[ $(id -u) == 0 ]]; then
    local account
    account=$(uv run --frozen python -c \
      'from cauri.kit.embedded_pg import server_account; print(server_account().pw_name)')
    chown -R "$account:" "$PGBOUNCER_DIR"
    as=(setpriv --reuid="$account" --regid="$account" --clear-groups)
  fi
  "${as[@]}" pgbouncer "$PGBOUNCER_DIR/pgbouncer.ini" >"$PGBOUNCER_DIR/log" 2>&1 &
  PGBOUNCER_PID=$!
  for _ in $(seq 100); do
    psql "postgresql://postgres@127.0.0.1:$PGBOUNCER_PORT/pgbouncer" -qAtX -c 'SHOW VERSION' \
      >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "pgbouncer did not start:" >&2
  cat "$PGBOUNCER_DIR/log" >&2
  exit 1
}

pgbouncer_stop() {
  [[ -n "${PGBOUNCER_PID:-}" ]] || return 0
  kill "$PGBOUNCER_PID" 2>/dev/null || true
  wait "$PGBOUNCER_PID" 2>/dev/null || true
  rm -rf "$PGBOUNCER_DIR"
  PGBOUNCER_PID=
}
