"""DESIGN: operator contract, `cauri keys list | revoke | rotate` (issue 8: keys and secrets).
The installed `cauri` command, against the database running servers use: what it changes
holds on them at once."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
import pytest
import typer

from cauri.cli import common as cli
from cauri.config import Settings
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.errors import NotFound
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from tests.foundation.builders import API, run_cli
from tests.support import ServerThread, assert_error, make_merchant, momo_body, scalar

FIELDS = {"id", "mode", "hint", "created_at", "expires_at", "revoked_at"}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def key_expiring_at(database_url: str, merchant_id: str, mode: str, at: str) -> str:
    created = await run_cli(
        database_url, "keys", "create", merchant_id, "--mode", mode, "--expires-at", at, "--json"
    )
    key: str = created.json()["key"]
    return key


async def status_of(client: httpx.AsyncClient, key: str) -> int:
    return (await client.get(f"{API}/payments", headers=bearer(key))).status_code


async def test_keys_list_shows_every_key_but_never_the_key(
    runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime)
    await make_merchant(runtime)  # another merchant's keys are not listed
    extra = await key_expiring_at(database_url, merchant.id, "test", "2030-01-01T00:00:00Z")

    listed = await run_cli(database_url, "keys", "list", merchant.id, "--json")
    rows = listed.rows()
    assert [set(row) for row in rows] == [FIELDS] * 3
    assert [(row["mode"], row["hint"]) for row in rows] == [
        ("test", "sk_test_…" + merchant.test_key[-4:]),
        ("live", "sk_live_…" + merchant.live_key[-4:]),
        ("test", "sk_test_…" + extra[-4:]),
    ]
    assert [row["expires_at"] for row in rows] == [None, None, "2030-01-01T00:00:00+00:00"]
    assert all(row["revoked_at"] is None for row in rows)
    assert all(datetime.fromisoformat(row["created_at"]).tzinfo for row in rows)
    assert len({row["id"] for row in rows}) == 3

    table = await run_cli(database_url, "keys", "list", merchant.id)
    assert table.exit_code == 0, table.stderr
    header, *lines = table.stdout.splitlines()
    assert header.split() == ["id", "mode", "hint", "created_at", "expires_at", "revoked_at"]
    assert len(lines) == 3 and extra[-4:] in lines[2]

    digests = await scalar(runtime, "SELECT string_agg(key_hash, ' ') FROM api_keys")
    for output in (listed.stdout + listed.stderr, table.stdout + table.stderr):
        for secret in (merchant.test_key, merchant.live_key, extra, *digests.split()):
            assert secret not in output
        for secret in (merchant.test_key, merchant.live_key, extra):
            assert secret[8:20] not in output  # not even a part of one


async def test_keys_revoke_holds_at_once_on_a_running_server(
    settings: Settings, runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime)
    with ServerThread(settings, database_url) as server:
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            assert await status_of(client, merchant.test_key) == 200
            test_key_id = (
                await run_cli(database_url, "keys", "list", merchant.id, "--json")
            ).rows()[0]["id"]

            revoked = (
                await run_cli(database_url, "keys", "revoke", str(test_key_id), "--json")
            ).json()
            assert revoked["id"] == test_key_id and revoked["revoked_at"] is not None
            assert set(revoked) == FIELDS

            refused = await client.get(f"{API}/payments", headers=bearer(merchant.test_key))
            assert_error(refused, 401, "unauthorized")
            paying = await client.post(
                f"{API}/payments", json=momo_body(), headers=bearer(merchant.test_key)
            )
            assert_error(paying, 401, "unauthorized")
            assert await status_of(client, merchant.live_key) == 200

            again = await run_cli(database_url, "keys", "revoke", str(test_key_id), "--json")
            assert again.json()["revoked_at"] == revoked["revoked_at"]
            assert_error(
                await client.get(f"{API}/payments", headers=bearer(merchant.test_key)),
                401,
                "unauthorized",
            )
    listed = (await run_cli(database_url, "keys", "list", merchant.id, "--json")).rows()
    assert [row["revoked_at"] is not None for row in listed] == [True, False]


async def test_a_revoked_key_is_unauthorized_even_if_it_has_expired(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    key = await key_expiring_at(
        database_url, merchant.id, "live", (clock.now() + timedelta(hours=1)).isoformat()
    )
    key_id = (await run_cli(database_url, "keys", "list", merchant.id, "--json")).rows()[-1]["id"]
    assert (await run_cli(database_url, "keys", "revoke", str(key_id))).exit_code == 0
    assert_error(await client.get(f"{API}/payments", headers=bearer(key)), 401, "unauthorized")
    clock.advance(hours=2)
    assert_error(await client.get(f"{API}/payments", headers=bearer(key)), 401, "unauthorized")


async def test_keys_rotate_gives_a_new_key_and_the_old_ones_expire_after_the_grace(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    soon = await key_expiring_at(
        database_url, merchant.id, "test", (clock.now() + timedelta(minutes=30)).isoformat()
    )

    rotated = await run_cli(
        database_url, "keys", "rotate", merchant.id, "--mode", "test", "--grace", "2h", "--json"
    )
    shown = rotated.json()
    assert set(shown) == {"key", "id", "hint", "others"}
    new_key = shown["key"]
    assert new_key.startswith("sk_test_") and shown["hint"] == "sk_test_…" + new_key[-4:]
    # The old test keys and when each stops working (issue 27, friction 5); never a live one.
    expiries = {other["hint"]: other["expires_at"] for other in shown["others"]}
    assert set(expiries) == {"sk_test_…" + merchant.test_key[-4:], "sk_test_…" + soon[-4:]}
    assert expiries["sk_test_…" + soon[-4:]] < expiries["sk_test_…" + merchant.test_key[-4:]]
    for key in (new_key, merchant.test_key, soon, merchant.live_key):
        assert await status_of(client, key) == 200

    clock.advance(minutes=31)  # the grace never lengthens a key's life
    assert_error(await client.get(f"{API}/payments", headers=bearer(soon)), 401, "key_expired")
    assert await status_of(client, merchant.test_key) == 200

    clock.advance(hours=2)
    assert_error(
        await client.get(f"{API}/payments", headers=bearer(merchant.test_key)), 401, "key_expired"
    )
    assert await status_of(client, new_key) == 200
    assert await status_of(client, merchant.live_key) == 200  # the other mode is untouched


async def test_keys_rotate_without_grace_and_by_default(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    live = (
        await run_cli(
            database_url, "keys", "rotate", merchant.id, "--mode", "live", "--grace", "0", "--json"
        )
    ).json()["key"]
    assert live.startswith("sk_live_")
    clock.advance(minutes=1)  # past the command's own (real) clock
    assert_error(
        await client.get(f"{API}/payments", headers=bearer(merchant.live_key)), 401, "key_expired"
    )
    assert await status_of(client, live) == 200

    test = (
        await run_cli(database_url, "keys", "rotate", merchant.id, "--mode", "test", "--json")
    ).json()["key"]
    clock.advance(hours=23)
    assert await status_of(client, merchant.test_key) == 200
    clock.advance(hours=1)  # 24 h by default
    assert_error(
        await client.get(f"{API}/payments", headers=bearer(merchant.test_key)), 401, "key_expired"
    )
    assert await status_of(client, test) == 200
    # A revoked key stays revoked, and is not given an expiry by a later rotation.
    listed = (await run_cli(database_url, "keys", "list", merchant.id, "--json")).rows()
    assert [row["mode"] for row in listed] == ["test", "live", "live", "test"]
    assert listed[2]["expires_at"] is None and listed[3]["expires_at"] is None


async def test_the_grace_is_counted_from_the_rotation(runtime: Runtime, database_url: str) -> None:
    merchant = await make_merchant(runtime)
    result = await run_cli(
        database_url, "keys", "rotate", merchant.id, "--mode", "test", "--grace", "90s", "--json"
    )
    assert result.exit_code == 0, result.stderr
    old, _, new = (await run_cli(database_url, "keys", "list", merchant.id, "--json")).rows()
    lifetime = datetime.fromisoformat(old["expires_at"]) - datetime.fromisoformat(new["created_at"])
    assert lifetime == timedelta(seconds=90)


@pytest.mark.parametrize(
    ("grace", "seconds"),
    [("0", 0), ("90s", 90), ("30m", 1800), ("24h", 86400), ("7d", 604800), ("45", 45)],
)
def test_grace_durations(grace: str, seconds: int) -> None:
    assert cli.parse_duration(grace, "--grace") == timedelta(seconds=seconds)


@pytest.mark.parametrize("grace", ["", "1w", "-1h", "1.5h", "h", "24 h x", "9" * 12 + "d", "٣h"])
def test_bad_grace_durations(grace: str) -> None:
    with pytest.raises(typer.BadParameter):
        cli.parse_duration(grace, "--grace")


async def test_a_bad_grace_is_refused(runtime: Runtime, database_url: str) -> None:
    merchant = await make_merchant(runtime)
    result = await run_cli(
        database_url, "keys", "rotate", merchant.id, "--mode", "test", "--grace", "1w"
    )
    assert result.exit_code != 0 and "Traceback" not in result.stderr
    assert await scalar(runtime, "SELECT count(*) FROM api_keys") == 2


@pytest.mark.parametrize(
    "command",
    [
        ["keys", "list", "mer_unknown", "--json"],
        ["keys", "rotate", "mer_unknown", "--mode", "test", "--json"],
        ["keys", "revoke", "999999"],
        ["keys", "revoke", "key_1"],
    ],
    ids=["list", "rotate", "revoke-unknown", "revoke-not-an-id"],
)
async def test_unknown_merchant_or_key(
    runtime: Runtime, database_url: str, command: list[str]
) -> None:
    await make_merchant(runtime)
    result = await run_cli(database_url, *command)
    assert result.error()["code"] == "not_found"
    assert result.stdout == ""
    assert await scalar(runtime, "SELECT count(*) FROM api_keys WHERE revoked_at IS NULL") == 2
    assert await scalar(runtime, "SELECT count(*) FROM api_keys WHERE expires_at IS NULL") == 2


@pytest.mark.parametrize("key_id", ["9" * 40, "-1", "1.0", "١", " 1"])
async def test_a_key_id_that_cannot_be_one_is_not_found(runtime: Runtime, key_id: str) -> None:
    await make_merchant(runtime)
    with pytest.raises(NotFound):
        async with unit_of_work(runtime.sessionmaker) as session:
            await merchants.revoke_key(session, key_id, now=runtime.clock.now())
    assert await scalar(runtime, "SELECT count(*) FROM api_keys WHERE revoked_at IS NULL") == 2
