"""`cauri serve`'s deployment checks (issue 8), on the installed command: off loopback it
needs CAURI_PUBLIC_URL and CAURI_SECRET_KEY (issue 23), and several processes without Redis
are told that each counts the rate limit apart."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from cauri.kit import development_key
from tests.cli import CAURI
from tests.conftest import TEST_SECRET_KEY
from tests.foundation.builders import run_cli
from tests.payments.test_public_url import non_loopback_address
from tests.support import free_port

REDIS_URL = os.environ.get("CAURI_TEST_REDIS_URL")


async def serve_until_it_answers(database_url: str, *args: str, **env: str) -> tuple[str, str, str]:
    """Runs `cauri serve`, waits until it answers over HTTP, stops it; returns the address it
    answered on and what it wrote on stderr and on stdout."""
    host = args[args.index("--host") + 1] if "--host" in args else "127.0.0.1"
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAURI_")}
    environment["CAURI_DATABASE_URL"] = database_url.replace(
        "postgresql+asyncpg://", "postgresql://", 1
    )
    # Its own data directory: on loopback without a key it makes one there.
    environment["CAURI_DATA_DIR"] = tempfile.mkdtemp(prefix="cauri-serve-")
    environment |= env
    process = await asyncio.create_subprocess_exec(
        str(CAURI),
        "serve",
        "--port",
        str(port),
        "--no-worker",
        *args,
        env=environment,
        stdout=asyncio.subprocess.PIPE,
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
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    return url, stderr.decode(), stdout.decode()


def starting(stdout: str) -> dict[str, str]:
    """The JSON line `serve` logs at start."""
    (line,) = [json.loads(line) for line in stdout.splitlines() if "serve.starting" in line]
    return dict(line)


@pytest.mark.parametrize("host", ["0.0.0.0", non_loopback_address() or "192.0.2.2"])  # noqa: S104
async def test_serve_off_loopback_without_public_url_refuses_to_start(
    database_url: str, host: str
) -> None:
    result = await run_cli(
        database_url, "serve", "--host", host, "--port", str(free_port()), process=True
    )
    assert result.exit_code == 2
    assert "CAURI_PUBLIC_URL is required" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", non_loopback_address() or "192.0.2.2"])  # noqa: S104
async def test_serve_off_loopback_without_secret_key_refuses_to_start(
    database_url: str, host: str
) -> None:
    """Issue 23: webhook signing secrets are kept encrypted with it."""
    result = await run_cli(
        database_url,
        "serve",
        "--host",
        host,
        "--port",
        str(free_port()),
        env_vars={"CAURI_PUBLIC_URL": "https://pay.cauri.example"},
        process=True,
    )
    assert result.exit_code == 2
    assert "CAURI_SECRET_KEY is required off loopback" in result.stderr
    assert "Traceback" not in result.stderr


async def test_serve_off_loopback_with_public_url_starts(database_url: str) -> None:
    host = non_loopback_address()
    if host is None:
        pytest.skip("this machine has no address besides loopback")
    _, stderr, stdout = await serve_until_it_answers(
        database_url,
        "--host",
        host,
        CAURI_PUBLIC_URL="https://pay.cauri.example",
        CAURI_SECRET_KEY=TEST_SECRET_KEY,
        CAURI_LOG_JSON="1",
    )
    assert "CAURI_PUBLIC_URL" not in stderr and "CAURI_SECRET_KEY" not in stderr
    assert starting(stdout)["docs"] == "https://pay.cauri.example/api/v1/docs"


async def test_serve_on_loopback_needs_no_public_url(database_url: str) -> None:
    with_password = make_url(database_url).set(drivername="postgresql", password="pw-H1dd3n")
    url, stderr, stdout = await serve_until_it_answers(
        with_password.render_as_string(hide_password=False),
        "--host",
        "127.0.0.1",
        CAURI_LOG_JSON="1",
    )
    assert "warning" not in stderr
    # It says at start where the database is (its password hidden) and where the docs are.
    line = starting(stdout)
    assert line["docs"] == url.replace("/payment-modes", "/docs")
    # Operators' callbacks are given the address it serves on (issue 27: a contract fake or a
    # sandbox on this machine calls back).
    [given] = logged(stdout, "serve.public_url_on_loopback")
    assert given["public_url"] == url.removesuffix("/api/v1/payment-modes")
    hidden = with_password.render_as_string(hide_password=True)
    # (The log's redaction may write its own mark over the *** .)
    assert line["database"] in {hidden, hidden.replace("***", "[redacted]")}
    assert "pw-H1dd3n" not in stdout + stderr


async def test_several_workers_without_redis_warn_that_each_counts_apart(
    database_url: str,
) -> None:
    _, stderr, _ = await serve_until_it_answers(database_url, "--workers", "2")
    assert (
        "warning: --workers 2 without CAURI_REDIS_URL: each process counts the rate limit apart"
        in stderr
    )


@pytest.mark.skipif(not REDIS_URL, reason="CAURI_TEST_REDIS_URL is not set")
async def test_several_workers_with_redis_do_not_warn(database_url: str) -> None:
    assert REDIS_URL is not None
    _, stderr, _ = await serve_until_it_answers(
        database_url, "--workers", "2", CAURI_REDIS_URL=REDIS_URL
    )
    assert "CAURI_REDIS_URL" not in stderr


def logged(stdout: str, event: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if f'"{event}"' in line]


async def test_serve_on_loopback_without_a_key_makes_one_once_that_every_command_uses(
    database_url: str, tmp_path: Path
) -> None:
    """Issue 27, friction 2: the development key, made once in the data directory (0600),
    said at start, used again by the next start and by the command line."""
    data_dir = tmp_path / "data"
    _, _, stdout = await serve_until_it_answers(
        database_url, CAURI_DATA_DIR=str(data_dir), CAURI_LOG_JSON="1"
    )
    [made] = logged(stdout, "serve.development_key")
    key_file = data_dir / "secret_key"
    assert made["path"] == str(key_file) and made["made_now"] is True
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text()
    _, _, stdout = await serve_until_it_answers(
        database_url, CAURI_DATA_DIR=str(data_dir), CAURI_LOG_JSON="1"
    )
    assert logged(stdout, "serve.development_key")[0]["made_now"] is False
    assert key_file.read_text() == key
    shown = await run_cli(
        database_url, "settings", "show", "--json", env_vars={"CAURI_DATA_DIR": str(data_dir)}
    )
    assert shown.json()["runtime"]["CAURI_SECRET_KEY"] == "set"
    elsewhere = await run_cli(database_url, "settings", "show", "--json")
    assert elsewhere.json()["runtime"]["CAURI_SECRET_KEY"] == "not set"


async def test_serve_on_loopback_allows_webhooks_to_this_machine_and_says_so(
    database_url: str,
) -> None:
    """Issue 27, friction 1: a developer's local receiver is accepted when the service
    serves on loopback only; CAURI_WEBHOOK_ALLOW_LOOPBACK=false keeps the public rule."""
    _, _, stdout = await serve_until_it_answers(database_url, CAURI_LOG_JSON="1")
    [said] = logged(stdout, "serve.webhooks_to_loopback_allowed")
    assert said["setting"] == "CAURI_WEBHOOK_ALLOW_LOOPBACK"
    _, _, stdout = await serve_until_it_answers(
        database_url, CAURI_LOG_JSON="1", CAURI_WEBHOOK_ALLOW_LOOPBACK="false"
    )
    assert logged(stdout, "serve.webhooks_to_loopback_allowed") == []


@pytest.mark.parametrize("host", ["0.0.0.0"])  # noqa: S104 (an address refused, not bound to)
async def test_a_development_key_is_no_key_for_serving_off_loopback(
    database_url: str, tmp_path: Path, host: str
) -> None:
    """A review's finding: the key `serve` made on loopback, adopted by every command from
    the data directory, let `serve --host 0.0.0.0` start without CAURI_SECRET_KEY."""
    (tmp_path / "secret_key").write_text("d" * 64 + "\n")
    (tmp_path / "secret_key").chmod(0o600)
    result = await run_cli(
        database_url,
        "serve",
        "--host",
        host,
        "--port",
        str(free_port()),
        env_vars={"CAURI_PUBLIC_URL": "https://pay.cauri.example", "CAURI_DATA_DIR": str(tmp_path)},
        process=True,
    )
    assert result.exit_code == 2
    assert "CAURI_SECRET_KEY is required off loopback" in result.stderr


async def test_behind_a_proxy_on_loopback_nothing_of_a_developers_machine_applies(
    database_url: str, tmp_path: Path
) -> None:
    """A review's finding: a production server on 127.0.0.1 behind a proxy (it has a public
    URL) must not let merchants' webhooks reach this machine, nor make a key of its own."""
    _, _, stdout = await serve_until_it_answers(
        database_url,
        CAURI_LOG_JSON="1",
        CAURI_DATA_DIR=str(tmp_path),
        CAURI_PUBLIC_URL="https://pay.cauri.example",
        CAURI_SECRET_KEY=TEST_SECRET_KEY,
    )
    for event in ("serve.webhooks_to_loopback_allowed", "serve.development_key"):
        assert logged(stdout, event) == [], event
    assert not (tmp_path / "secret_key").exists()


async def test_a_key_file_others_may_read_or_a_link_is_refused(
    database_url: str, tmp_path: Path
) -> None:
    """A review's finding: a key planted in the data directory by another account (or
    readable by others, or a link to elsewhere) is never used."""
    key_file = tmp_path / "secret_key"
    key_file.write_text("e" * 64 + "\n")
    key_file.chmod(0o644)
    env = {"CAURI_DATA_DIR": str(tmp_path)}
    refused = await run_cli(database_url, "settings", "show", "--json", env_vars=env)
    assert refused.exit_code == 2 and "may be read or written by others" in refused.stderr
    key_file.unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("f" * 64 + "\n")
    elsewhere.chmod(0o600)
    key_file.symlink_to(elsewhere)
    linked = await run_cli(database_url, "settings", "show", "--json", env_vars=env)
    assert linked.exit_code == 2 and "cannot be read safely" in linked.stderr


def test_an_empty_key_file_is_named_not_recursed_on(tmp_path: Path) -> None:
    (tmp_path / "secret_key").touch(mode=0o600)
    with pytest.raises(development_key.UnsafeKeyFile, match="is empty"):
        development_key.made(tmp_path)
