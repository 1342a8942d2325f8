"""Writes a pgbench script (to standard output) that makes, per transaction, the floor's
payout (bench/floor.py, `PAYOUT`): the same statement, run by PostgreSQL alone, with no HTTP
server in front: what the database itself does for a whole payout from one balance, to set
beside its one-row update (bench/pgbench_one_row.sql). bench/payouts.sh runs it with
`-M prepared`.

The request's values become literals or SQL: the key's digest and the amount are the
arguments; the reference, the event id and the time are made by PostgreSQL
(`md5(random()::text)`, `gen_random_uuid()`, `now()`); no external_id; the operator is MTN
and the number one the simulator pays at once, as in bench/payouts.lua. pgbench reads any
`:name` as a variable, inside string literals too: the colons of the literals (account
codes) are written `chr(58)`.

    uv run python bench/pgbench_payout.py KEY_SHA256_HEX AMOUNT > /tmp/payout.sql
"""

from __future__ import annotations

import re
import string
import sys

from floor import PAYOUT

# The floor's parameters ($1 … $10), in SQL pgbench can run.
VALUES = {
    "1": "'{digest}'",
    "2": "'pyo_' || md5(random()::text)",
    "3": "{amount}",
    "4": "'XOF'",
    "5": "'mtn'",
    "6": "now()",
    "7": "NULL",
    "8": "'22997000000'",
    "9": "gen_random_uuid()",
    "10": "now()::text",
}


def script(digest: str, amount: int) -> str:
    if not (len(digest) == 64 and set(digest) <= set(string.hexdigits)):
        raise SystemExit("pgbench_payout: the key's digest is 64 hexadecimal digits")
    values = {n: sql.format(digest=digest, amount=amount) for n, sql in VALUES.items()}
    statement = re.sub(r"\$(\d+)", lambda match: f"({values[match.group(1)]})", PAYOUT)
    statement = re.sub(
        r"'[^']*'", lambda match: match.group(0).replace(":", "' || chr(58) || '"), statement
    )
    # pgbench reads one SQL command per line unless it ends with a semicolon.
    return " ".join(line.strip() for line in statement.splitlines() if line.strip()) + ";\n"


if __name__ == "__main__":
    print(script(sys.argv[1], int(sys.argv[2])), end="")
