"""Issue 23: CAURI_SECRET_KEY can be replaced. The new key encrypts, the previous ones
(CAURI_PREVIOUS_SECRET_KEYS) still decrypt, and `cauri secrets rotate` encrypts every secret
at rest again with the new key (connector credentials, webhook signing secrets, staff TOTP
secrets), in one transaction, audited with counts only; run again, it changes nothing."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from sqlalchemy import text

from cauri.audit.actor import Actor
from cauri.cli.settings import runtime_settings
from cauri.config import Settings
from cauri.connectors.errors import ConnectorError
from cauri.connectors.secrets import SecretBox
from cauri.kit.db import unit_of_work
from cauri.people import totp
from cauri.runtime import Runtime, operator_registry
from cauri.staff import keyring
from tests.conftest import TEST_SECRET_KEY
from tests.connectors.builders import SECRET, Builds, add_fake, cauri, in_session
from tests.console.builders import make_staff
from tests.support import make_merchant, scalar, webhook_secrets_in_clear, with_settings

OLD, NEW = TEST_SECRET_KEY, "n" * 40
BLOBS = """SELECT json_build_array(
    (SELECT array_agg(encode(secrets, 'hex')) FROM connector_accounts),
    (SELECT array_agg(encode(totp_secret, 'hex')) FROM users),
    (SELECT array_agg(encode(sealed_secret, 'hex') ORDER BY livemode) FROM webhook_endpoints)
)::text"""


def test_the_new_key_encrypts_and_every_key_decrypts() -> None:
    old_blob = SecretBox(OLD).encrypt("mtn-bj", {"api_key": SECRET})
    ring = SecretBox(NEW, [OLD])
    assert ring.decrypt("mtn-bj", old_blob) == {"api_key": SECRET}
    new_blob = ring.encrypt("mtn-bj", {"api_key": SECRET})
    assert SecretBox(NEW).decrypt("mtn-bj", new_blob) == {"api_key": SECRET}
    with pytest.raises(ConnectorError, match="CAURI_PREVIOUS_SECRET_KEYS"):
        SecretBox(OLD).decrypt("mtn-bj", new_blob)
    resealed = ring.reseal("mtn-bj", old_blob)
    assert resealed is not None and SecretBox(NEW).decrypt("mtn-bj", resealed)
    assert ring.reseal("mtn-bj", new_blob) is None  # already under the new key


def test_previous_keys_are_read_and_checked() -> None:
    settings = Settings(secret_key=NEW, previous_secret_keys=f" {OLD} , {'p' * 32},")
    assert settings.previous_keys == (OLD, "p" * 32)
    with pytest.raises(ValidationError, match="CAURI_PREVIOUS_SECRET_KEYS: key 2"):
        Settings(previous_secret_keys=f"{OLD},short")


def test_previous_keys_are_never_shown() -> None:
    shown = json.dumps(runtime_settings(Settings(secret_key=NEW, previous_secret_keys=OLD)))
    assert OLD not in shown and NEW not in shown
    assert '"CAURI_PREVIOUS_SECRET_KEYS": "set"' in shown
    unset = runtime_settings(Settings())
    assert unset["CAURI_PREVIOUS_SECRET_KEYS"] == "not set"


async def everything_sealed_with_the_old_key(runtime: Runtime) -> tuple[list[str], str]:
    """A merchant (two webhook secrets, the live one still in clear as before migration
    0025), a connector account and an enrolled admin, under OLD."""
    await make_merchant(runtime)
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text(
                "UPDATE webhook_endpoints SET secret = 'whsec_legacy', sealed_secret = NULL "
                "WHERE livemode"
            )
        )
    await add_fake(runtime)
    member = await make_staff(runtime, "ali@cauri.example", "admin")
    assert member.secret is not None
    return await webhook_secrets_in_clear(runtime), member.secret


async def rotate(runtime: Runtime) -> dict[str, int]:
    async with unit_of_work(runtime.sessionmaker) as session:
        return await keyring.rotate(session, runtime, Actor.cli())


async def readable_with(runtime: Runtime, webhooks: list[str], totp_secret: str) -> None:
    assert await webhook_secrets_in_clear(runtime) == webhooks
    registry = operator_registry(runtime.settings)
    routed = await in_session(runtime, lambda s: registry.by_name(s, "fake-bj"))
    assert routed is not None and routed.adapter.config.secrets == {"token": SECRET}
    [(account_id, blob)] = (
        await in_session(
            runtime,
            lambda s: s.execute(text("SELECT id, totp_secret FROM users")),
        )
    ).all()
    settings = runtime.settings
    unsealed = totp.unseal(settings.secret_key, account_id, blob, settings.previous_keys)
    assert unsealed == totp_secret


async def test_rotate_encrypts_everything_again_with_the_new_key(
    runtime: Runtime, builds: Builds
) -> None:
    webhooks, totp_secret = await everything_sealed_with_the_old_key(runtime)
    replaced = with_settings(runtime, secret_key=NEW, previous_secret_keys=OLD)
    # Before the rotation, servers with the new key and the old one as previous read all.
    await readable_with(replaced, webhooks, totp_secret)
    assert await rotate(replaced) == {
        "connectors": 1,
        "staff_totp": 1,
        "webhooks": 1,
        "webhooks_sealed_from_clear": 1,
        "already_current": 0,
    }
    await readable_with(with_settings(runtime, secret_key=NEW), webhooks, totp_secret)
    with pytest.raises(ConnectorError):
        await webhook_secrets_in_clear(runtime)  # the old key alone no longer opens them
    blobs = await scalar(runtime, BLOBS)
    assert await rotate(replaced) == {
        "connectors": 0,
        "staff_totp": 0,
        "webhooks": 0,
        "webhooks_sealed_from_clear": 0,
        "already_current": 4,
    }
    assert await scalar(runtime, BLOBS) == blobs  # idempotent: nothing rewritten
    logged = await scalar(
        runtime,
        "SELECT json_agg(json_build_array(actor_kind, action, resource_type, after) "
        "ORDER BY id)::text FROM audit_log WHERE action LIKE 'secrets.%'",
    )
    entries = json.loads(logged)
    assert [entry[:3] for entry in entries] == [["cli", "secrets.rotate", "keyring"]] * 2
    assert entries[0][3]["connectors"] == 1
    whole = await scalar(runtime, "SELECT string_agg(row_to_json(a)::text, ' ') FROM audit_log a")
    for secret in (*webhooks, totp_secret, SECRET, NEW, OLD):
        assert secret not in whole


async def test_a_blob_no_key_opens_stops_the_whole_rotation(
    runtime: Runtime, builds: Builds
) -> None:
    await everything_sealed_with_the_old_key(runtime)
    blobs = await scalar(runtime, BLOBS)
    lost = with_settings(runtime, secret_key=NEW, previous_secret_keys="x" * 32)
    with pytest.raises(ConnectorError, match="fake-bj ne se déchiffrent"):
        await rotate(lost)
    assert await scalar(runtime, BLOBS) == blobs
    assert (
        await scalar(runtime, "SELECT count(*) FROM audit_log WHERE action LIKE 'secrets.%'") == 0
    )


async def test_the_cli_rotates(runtime: Runtime, builds: Builds, database_url: str) -> None:
    webhooks, totp_secret = await everything_sealed_with_the_old_key(runtime)
    done = await cauri(
        database_url,
        "secrets",
        "rotate",
        "--json",
        secret_key=NEW,
        previous_secret_keys=OLD,
    )
    assert done.exit_code == 0, done.stderr
    assert done.json()["webhooks"] == 1 and done.json()["already_current"] == 0
    await readable_with(with_settings(runtime, secret_key=NEW), webhooks, totp_secret)
    again = await cauri(database_url, "secrets", "rotate", secret_key=NEW)
    assert again.exit_code == 0, again.stderr
    assert "already current: 4" in again.stdout
