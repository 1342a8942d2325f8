"""Issue 23: a webhook endpoint's signing secret is kept encrypted with CAURI_SECRET_KEY,
never in clear; the merchant still reads it in clear and notifications are signed with it as
before. A secret written in clear before (migration 0025) still signs until it is sealed."""

from __future__ import annotations

import httpx
from sqlalchemy import text

from cauri.audit.actor import Actor
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.staff import actions, keyring
from cauri.worker.runner import Worker
from cauri_client import webhooks as sdk
from tests.support import make_merchant, scalar, with_settings
from tests.webhooks.builders import ENDPOINT, send_test, set_endpoint
from tests.webhooks.receiver import Receiver

ROW = "SELECT row_to_json(w)::text FROM webhook_endpoints w WHERE NOT livemode"
LEGACY = "whsec_" + "L" * 43


async def test_the_signing_secret_is_never_stored_in_clear(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    shown = (await client.get(ENDPOINT, headers=merchant.headers())).json()["data"]["secret"]
    assert shown.startswith("whsec_")
    assert (
        await scalar(runtime, "SELECT count(*) FROM webhook_endpoints WHERE secret IS NOT NULL")
        == 0
    )
    assert shown not in await scalar(runtime, ROW)
    rotated = (await set_endpoint(client, merchant, receiver.url, rotate=True))["secret"]
    assert rotated != shown and rotated not in await scalar(runtime, ROW)
    again = (await client.get(ENDPOINT, headers=merchant.headers())).json()["data"]["secret"]
    assert again == rotated
    await send_test(client, merchant)
    await worker.drain()
    [request] = await receiver.wait_for(1)
    assert sdk.verify(request.body, request.headers["x-service-signature"], rotated)


async def test_without_the_key_a_merchant_is_created_as_before_and_sealed_later(
    runtime: Runtime,
) -> None:
    """The operator CLI's contract holds without CAURI_SECRET_KEY (a development service on
    loopback; serving off loopback requires the key): the merchant is created, its secrets
    kept in clear as before migration 0025, and sealed once a key is set."""
    keyless = with_settings(runtime, secret_key=None)
    async with unit_of_work(keyless.sessionmaker) as session:
        await actions.create_merchant(
            session, keyless, Actor.cli(), name="Boutique", status="active"
        )
    clear = "SELECT count(*) FROM webhook_endpoints WHERE secret IS NOT NULL"
    assert await scalar(runtime, clear) == 2
    async with unit_of_work(runtime.sessionmaker) as session:
        assert await keyring.seal_clear(session, runtime, Actor.cli()) == 2
    assert await scalar(runtime, clear) == 0


async def written_in_clear(runtime: Runtime) -> None:
    """The test endpoint's secret as a row written before migration 0025 holds it."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            text(
                "UPDATE webhook_endpoints SET secret = :secret, sealed_secret = NULL "
                "WHERE NOT livemode"
            ),
            {"secret": LEGACY},
        )


async def test_a_secret_written_in_clear_before_signs_until_sealed_and_after(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, receiver.url)
    await written_in_clear(runtime)
    for sealed in (1, 0):
        shown = (await client.get(ENDPOINT, headers=merchant.headers())).json()["data"]
        assert shown["secret"] == LEGACY
        await send_test(client, merchant)
        await worker.drain()
        request = (await receiver.wait_for(2 - sealed))[-1]
        assert sdk.verify(request.body, request.headers["x-service-signature"], LEGACY)
        # What `cauri migrate` and `cauri serve` do once CAURI_SECRET_KEY is set.
        async with unit_of_work(runtime.sessionmaker) as session:
            assert await keyring.seal_clear(session, runtime, Actor.cli()) == sealed
        assert LEGACY not in await scalar(runtime, ROW)
    entries = await scalar(
        runtime,
        "SELECT json_agg(json_build_array(action, after))::text FROM audit_log",
    )
    assert entries == '[["secrets.seal", {"webhooks_sealed_from_clear": 1}]]'
