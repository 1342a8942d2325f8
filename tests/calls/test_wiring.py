"""Each composition root wires the domains into the call protocol itself (cauri.wiring): in a
fresh process, where no test's conftest has wired anything, nothing is wired until the worker's
table is built or a CLI command runs, and then every kind of row operators answer about is."""

from __future__ import annotations

import subprocess
import sys

from tests.cli import environment

KINDS = ["payment", "payout", "plan_refund", "refund"]

_CHECK = """
import sys
from cauri.calls import service as calls
from cauri.payments.service import payments
assert not calls._KINDS and payments.instalment_settled is None
{root}
print(sorted(calls._KINDS), payments.instalment_settled is not None)
"""

_WORKER = "from cauri import jobs; jobs.handlers()"
_CLI = """
from cauri.cli.common import in_transaction
async def work(session, runtime):
    return None
in_transaction(work)
"""


def _wired_by(root: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _CHECK.format(root=root)],
        capture_output=True,
        text=True,
        env=environment(env),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_workers_table_wires_every_subject_kind() -> None:
    assert _wired_by(_WORKER, {}) == f"{KINDS} True"


def test_a_cli_command_wires_every_subject_kind(database_url: str) -> None:
    url = database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
    assert _wired_by(_CLI, {"CAURI_DATABASE_URL": url}) == f"{KINDS} True"
