"""`cauri serve`'s deployment checks (issue 8), on the installed command: off loopback it
needs CAURI_PUBLIC_URL, and several processes without Redis are told that each counts the
rate limit apart."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import httpx
import pytest

from tests.foundation.builders import CAURI, run_cli
from tests.payments.test_public_url import non_loopback_address
from tests.support import free_port

REDIS_URL = os.environ.get("CAURI_TEST_REDIS_URL")


async def serve_until_it_answers(database_url: str, *args: str, **env: str) -> tuple[str, str]:
    """Runs `cauri serve`, waits until it answers over HTTP, stops it; returns the address it
    answered on and what it wrote on stderr."""
    host = args[args.index("--host") + 1] if "--host" in args else "127.0.0.1"
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAURI_")}
    environment["CAURI_DATABASE_URL"] = database_url.replace(
        "postgresql+asyncpg://", "postgresql://", 1
    )
    environment |= env
    process = await asyncio.create_subprocess_exec(
        str(CAURI),
        "serve",
        "--port",
        str(port),
        "--no-worker",
        *args,
        env=environment,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    url = f"http://{host}:{port}/api/v1/payment-modes"
    try:
        deadline = time.monotonic() + 60
        async with httpx.AsyncClient(timeout=5) as http:
            while True:
                assert process.returncode is None, "cauri serve stopped"
                try:
                    answer = await http.get(url)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "cauri serve never answered"
                    await asyncio.sleep(0.2)
        assert answer.status_code == 401, answer.text
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    return url, stderr.decode()


@pytest.mark.parametrize("host", ["0.0.0.0", non_loopback_address() or "192.0.2.2"])  # noqa: S104
async def test_serve_off_loopback_without_public_url_refuses_to_start(
    database_url: str, host: str
) -> None:
    result = await run_cli(database_url, "serve", "--host", host, "--port", str(free_port()))
    assert result.exit_code == 2
    assert "CAURI_PUBLIC_URL is required" in result.stderr
    assert "Traceback" not in result.stderr


async def test_serve_off_loopback_with_public_url_starts(database_url: str) -> None:
    host = non_loopback_address()
    if host is None:
        pytest.skip("this machine has no address besides loopback")
    _, stderr = await serve_until_it_answers(
        database_url, "--host", host, CAURI_PUBLIC_URL="https://pay.cauri.example"
    )
    assert "CAURI_PUBLIC_URL" not in stderr


async def test_serve_on_loopback_needs_no_public_url(database_url: str) -> None:
    _, stderr = await serve_until_it_answers(database_url, "--host", "127.0.0.1")
    assert "warning" not in stderr


async def test_several_workers_without_redis_warn_that_each_counts_apart(
    database_url: str,
) -> None:
    _, stderr = await serve_until_it_answers(database_url, "--workers", "2")
    assert (
        "warning: --workers 2 without CAURI_REDIS_URL: each process counts the rate limit apart"
        in stderr
    )


@pytest.mark.skipif(not REDIS_URL, reason="CAURI_TEST_REDIS_URL is not set")
async def test_several_workers_with_redis_do_not_warn(database_url: str) -> None:
    assert REDIS_URL is not None
    _, stderr = await serve_until_it_answers(
        database_url, "--workers", "2", CAURI_REDIS_URL=REDIS_URL
    )
    assert "CAURI_REDIS_URL" not in stderr
