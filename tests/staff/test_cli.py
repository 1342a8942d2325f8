"""Issue 14: `cauri staff create|list|disable|link`, run as the installed command against the
database a running console uses."""

from __future__ import annotations

import getpass
from collections.abc import Mapping

import pyotp

from cauri.config import Settings
from cauri.runtime import Runtime
from tests.cli import CliResult
from tests.conftest import TEST_SECRET_KEY
from tests.console.builders import NEW_PASSWORD, ConsoleClient
from tests.foundation.builders import run_cli
from tests.support import ServerThread, scalar

KEY = {"CAURI_SECRET_KEY": TEST_SECRET_KEY}


async def _create(
    database_url: str,
    email: str,
    role: str,
    *options: str,
    env_vars: Mapping[str, str] | None = KEY,
    stdin: str | None = None,
) -> CliResult:
    return await run_cli(
        database_url,
        "staff",
        "create",
        email,
        "--role",
        role,
        *options,
        env_vars=env_vars,
        stdin=stdin,
    )


async def _welcome(base_url: str, path: str) -> None:
    """Follows a finance account's link: a password, then the TOTP enrollment."""
    async with ConsoleClient(base_url) as console:
        csrf = await console.csrf_of(path)
        welcomed = await console.post(
            path, {"csrf": csrf, "password": NEW_PASSWORD, "confirmation": NEW_PASSWORD}
        )
        assert welcomed.headers["location"] == "/console/two-factor"
        page = (await console.get("/console/two-factor")).text
        secret = page.split('id="totp-secret">')[1].split("<")[0].replace(" ", "")
        enrolled = await console.give_code(pyotp.TOTP(secret).now(), "/console/two-factor")
        assert enrolled.headers["location"] == "/console/"


async def test_create_prints_a_one_time_link_that_signs_in(
    database_url: str, runtime: Runtime, settings: Settings
) -> None:
    with ServerThread(settings, database_url) as server:
        env = KEY | {"CAURI_PUBLIC_URL": server.base_url}
        created = await _create(database_url, "Awa@Cauri.example", "finance", env_vars=env)
        assert created.exit_code == 0, created.stderr
        link = created.stdout.splitlines()[-1]
        assert link.startswith(f"{server.base_url}/console/welcome/")
        assert "awa@cauri.example (finance)" in created.stdout and "valid until" in created.stdout
        await _welcome(server.base_url, link.removeprefix(server.base_url))

    listed = (await run_cli(database_url, "staff", "list", "--json")).rows()
    assert listed == [
        {
            "id": listed[0]["id"],
            "email": "awa@cauri.example",
            "role": "finance",
            "password_set": True,
            "totp_enabled": True,
            "created_at": listed[0]["created_at"],
            "last_sign_in_at": listed[0]["last_sign_in_at"],
            "disabled_at": None,
        }
    ]
    assert listed[0]["last_sign_in_at"] is not None


async def test_create_with_a_password_from_stdin(database_url: str, runtime: Runtime) -> None:
    created = await _create(
        database_url,
        "koffi@cauri.example",
        "viewer",
        "--password-stdin",
        "--json",
        stdin=NEW_PASSWORD + "\n",
    )
    row = created.json()
    assert row["password_set"] is True and row["role"] == "viewer" and "link" not in row
    assert "une phrase" not in created.stdout
    assert await scalar(runtime, "SELECT count(*) FROM sign_in_links") == 0
    stored = await scalar(runtime, "SELECT password_hash FROM users")
    assert stored.startswith("$argon2id$")

    short = await _create(
        database_url, "sika@cauri.example", "viewer", "--password-stdin", stdin="court\n"
    )
    assert short.exit_code == 2 and "12" in short.stderr
    assert await scalar(runtime, "SELECT count(*) FROM users") == 1


async def test_create_refusals(database_url: str, runtime: Runtime) -> None:
    first = await _create(database_url, "a@cauri.example", "viewer")
    assert first.exit_code == 0, first.stderr
    again = await _create(database_url, "A@CAURI.example", "admin")
    assert again.error()["code"] == "conflict"
    role = await _create(database_url, "b@cauri.example", "root")
    assert role.error()["details"] == {"role": [role.error()["message"]]}
    email = await _create(database_url, "not-an-email", "viewer")
    assert list(email.error()["details"]) == ["email"]
    no_key = await _create(database_url, "c@cauri.example", "viewer", env_vars=None)
    assert "CAURI_SECRET_KEY" in no_key.error()["message"]
    assert await scalar(runtime, "SELECT count(*) FROM users") == 1


async def test_disable_and_link(database_url: str, runtime: Runtime) -> None:
    empty = await run_cli(database_url, "staff", "list")
    assert "no staff account" in empty.stdout
    await _create(database_url, "awa@cauri.example", "admin")
    first_link = "SELECT token_hash FROM sign_in_links"
    before = await scalar(runtime, first_link)

    linked = await run_cli(
        database_url, "staff", "link", "AWA@cauri.example", "--json", env_vars=KEY
    )
    row = linked.json()
    assert row["link"].startswith("http://127.0.0.1:8000/console/welcome/")
    assert await scalar(runtime, "SELECT count(*) FROM sign_in_links") == 1
    assert await scalar(runtime, first_link) != before  # the earlier link no longer works

    disabled = await run_cli(database_url, "staff", "disable", "awa@cauri.example")
    assert disabled.exit_code == 0 and "disabled at" in disabled.stdout
    assert await scalar(runtime, "SELECT count(*) FROM sign_in_links") == 0
    text = (await run_cli(database_url, "staff", "list")).stdout.splitlines()
    assert text[0].split() == [
        "email",
        "role",
        "password_set",
        "totp_enabled",
        "last_sign_in_at",
        "disabled_at",
    ]
    assert text[1].split()[:4] == ["awa@cauri.example", "admin", "no", "no"]
    assert text[1].split()[-1] != "-"
    refused = await run_cli(database_url, "staff", "link", "awa@cauri.example", env_vars=KEY)
    assert refused.error()["code"] == "conflict"
    unknown = await run_cli(database_url, "staff", "disable", "nobody@cauri.example")
    assert unknown.error()["code"] == "not_found"
    # Each change is in the audit log, by the CLI's user, never with a hash, a secret or a link.
    logged = await run_cli(database_url, "audit", "list", "--resource", "staff_account", "--json")
    entries = logged.rows()
    assert [e["action"] for e in reversed(entries)] == [
        "staff.create",
        "staff.link",
        "staff.disable",
    ]
    assert {e["actor_name"] for e in entries} == {f"cli:{getpass.getuser()}"}
    assert entries[0]["before"]["disabled_at"] is None and entries[0]["after"]["disabled_at"]
    assert "argon2" not in logged.stdout and "/console/welcome/" not in logged.stdout
