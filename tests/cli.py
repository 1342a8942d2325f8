"""The `cauri` command line as tests run it: in this process by default (what a command does
is the subject, and a subprocess pays seconds of imports), or as the installed program when
the process itself is the subject (start-up, signals, servers): `process=True`."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from cauri.cli import app
from cauri.config import get_settings

CAURI = Path(sys.executable).parent / "cauri"
TIMEOUT = 120  # seconds: generous on a loaded machine; a hung command fails the test
# A data directory that is never made: without it, a command would read the development key
# of whoever runs the tests (./.cauri/secret_key). A test that wants one gives its own.
NO_DATA_DIR = str(Path(tempfile.gettempdir()) / f"cauri-tests-no-data-{os.getpid()}")
# What a command sets for the processes it starts (cli/common.use_setting): put back after a
# command run in this process.
_SET_BY_COMMANDS = ("CAURI_DATABASE_URL", "CAURI_SECRET_KEY", "CAURI_WEBHOOK_ALLOW_LOOPBACK")


@dataclass(frozen=True)
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        assert self.exit_code == 0, self.stderr
        data: dict[str, Any] = json.loads(self.stdout)
        return data

    def rows(self) -> list[dict[str, Any]]:
        """The JSON array a listing command prints."""
        assert self.exit_code == 0, self.stderr
        data: list[dict[str, Any]] = json.loads(self.stdout)
        return data

    def error(self) -> dict[str, Any]:
        """The error envelope a refused command prints on stderr (and nothing else there)."""
        assert self.exit_code != 0, self.stdout
        assert "Traceback" not in self.stderr, self.stderr
        envelope: dict[str, Any] = json.loads(self.stderr)
        assert envelope["success"] is False
        error: dict[str, Any] = envelope["error"]
        return error


def environment(env: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without its CAURI_* settings, then `env` (with a data
    directory of none unless it names one)."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("CAURI_")}
    return kept | {"CAURI_DATA_DIR": NO_DATA_DIR} | dict(env)


async def run(*args: str, env: Mapping[str, str], stdin: str | None, process: bool) -> CliResult:
    """`cauri ARGS` with the CAURI_* settings `env` (and no other), `stdin` typed in."""
    if process:
        return await _as_process(args, environment(env), stdin)
    return await asyncio.wait_for(asyncio.to_thread(_in_process, args, env, stdin), TIMEOUT)


async def _as_process(args: tuple[str, ...], env: dict[str, str], stdin: str | None) -> CliResult:
    child = await asyncio.create_subprocess_exec(
        str(CAURI),
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    typed = None if stdin is None else stdin.encode()
    stdout, stderr = await asyncio.wait_for(child.communicate(typed), TIMEOUT)
    assert child.returncode is not None
    return CliResult(child.returncode, stdout.decode(), stderr.decode())


def _in_process(args: tuple[str, ...], env: Mapping[str, str], stdin: str | None) -> CliResult:
    """Run in a thread of its own: a command runs its own event loop (asyncio.run). The
    settings are read afresh, as a new process would, and this process's CAURI_* hidden."""
    hidden: dict[str, str | None] = {k: None for k in os.environ if k.startswith("CAURI_")}
    hidden |= {k: None for k in _SET_BY_COMMANDS} | {"CAURI_DATA_DIR": NO_DATA_DIR}
    get_settings.cache_clear()
    with CliRunner().isolation(input=stdin, env=hidden | dict(env)) as (stdout, stderr, _):
        try:
            app.main(args=list(args), prog_name="cauri")
            code = 0
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        except Exception:
            # What the program would print before dying: a test that asserts no traceback
            # sees it.
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            result = CliResult(code, stdout.getvalue().decode(), stderr.getvalue().decode())
    get_settings.cache_clear()
    return result
