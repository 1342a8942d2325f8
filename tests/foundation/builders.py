"""Builders for the foundation's tests: apps with their own settings, live payments, the CLI."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import httpx
from fastapi import FastAPI

from cauri.app import create_app
from cauri.runtime import Runtime
from tests import cli
from tests.cli import CliResult
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


# What a command that writes a secret at rest needs (a merchant's webhook secrets).
KEYED = {"CAURI_SECRET_KEY": TEST_SECRET_KEY}


async def run_cli(
    database_url: str,
    *args: str,
    env_vars: Mapping[str, str] | None = None,
    stdin: str | None = None,
    process: bool = False,
) -> CliResult:
    """`cauri ARGS` against the test database, as an operator would run it; `env_vars`: other
    CAURI_* settings (CAURI_DATABASE_URL too, to reach it otherwise); `stdin`: what is typed
    or piped in; `process`: as the installed program (tests/cli.py)."""
    env = {"CAURI_DATABASE_URL": database_url.replace("postgresql+asyncpg://", "postgresql://", 1)}
    return await cli.run(*args, env=env | dict(env_vars or {}), stdin=stdin, process=process)
