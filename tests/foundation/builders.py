"""Builders for the foundation's tests: apps with their own settings, live payments, the CLI."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from cauri.app import create_app
from cauri.runtime import Runtime
from tests.conftest import TEST_SECRET_KEY

API = "/api/v1"


def app_with(runtime: Runtime, **settings: Any) -> FastAPI:
    """The real app on the test database, with some settings changed (rate limit, proxies,
    Redis). Its lifespan is never run, so the shared engine is not disposed of."""
    changed = runtime.settings.model_copy(update=settings)
    return create_app(dataclasses.replace(runtime, settings=changed))


def client_of(app: FastAPI, peer: str = "127.0.0.1") -> httpx.AsyncClient:
    """An in-process HTTP client whose requests arrive from the address `peer`."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False, client=(peer, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


def open_live_mode(runtime: Runtime, operator: str = "mtn") -> None:
    """Lets live keys pay with `operator`, the simulator standing in for its network (live
    mode has no operator adapter in tests otherwise, so every live payment would be a 422)."""
    runtime.operators.live_adapters[operator] = runtime.operators.simulator


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


CAURI = Path(sys.executable).parent / "cauri"
# What a command that writes a secret at rest needs (a merchant's webhook secrets).
KEYED = {"CAURI_SECRET_KEY": TEST_SECRET_KEY}


async def run_cli(
    database_url: str,
    *args: str,
    env_vars: Mapping[str, str] | None = None,
    stdin: str | None = None,
) -> CliResult:
    """Runs the installed `cauri` command against the test database, as an operator would;
    `env_vars`: other CAURI_* settings (CAURI_DATABASE_URL too, to reach it otherwise);
    `stdin`: what is typed or piped in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAURI_")}
    env["CAURI_DATABASE_URL"] = database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
    env |= env_vars or {}
    process = await asyncio.create_subprocess_exec(
        str(CAURI),
        *args,
        env=env,
        stdin=None if stdin is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    typed = None if stdin is None else stdin.encode()
    stdout, stderr = await asyncio.wait_for(process.communicate(typed), timeout=60)
    assert process.returncode is not None
    return CliResult(process.returncode, stdout.decode(), stderr.decode())
