"""Issue 26: a key made on the dashboard works on the API, then, revoked, is refused (401);
a rotation keeps the old keys for the grace chosen; developers hold the test keys, owners
the live ones too; another merchant's key is a 404; every key action is audited."""

from __future__ import annotations

import html
import re

import httpx

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from cauri_client.webhooks import verify
from tests.console.builders import ConsoleClient, make_member
from tests.console.test_actions import catch_up
from tests.support import make_merchant, scalar
from tests.webhooks.builders import set_endpoint
from tests.webhooks.receiver import Receiver

API = "/api/v1"
_NEW_KEY = re.compile(r'id="new-key" class="wrap">([^<]+)<')


async def _post(dashboard: ConsoleClient, page: str, action: str, **fields: str) -> httpx.Response:
    csrf = await dashboard.csrf_of(page)
    return await dashboard.post(f"{page}{action}", {"csrf": csrf, **fields})


async def _as_developer(dashboard: ConsoleClient, runtime: Runtime, merchant_id: str) -> None:
    await dashboard.signed_in_as(
        await make_member(runtime, merchant_id, "dev@s.example", "developer")
    )


def _new_key(answer: httpx.Response) -> str:
    assert answer.status_code == 200, answer.text
    found = _NEW_KEY.search(answer.text)
    assert found is not None, answer.text
    return found.group(1)


async def test_a_key_made_here_works_on_the_api_then_revoked_is_refused(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    developer = await make_member(runtime, merchant.id, "dev@shop.example", "developer")
    await dashboard.signed_in_as(developer)
    page = "/dashboard/test/developers"
    key = _new_key(await _post(dashboard, page, "/keys"))
    assert key.startswith("sk_test_")
    headers = {"Authorization": f"Bearer {key}"}
    assert (await client.get(f"{API}/payments", headers=headers)).status_code == 200

    key_id = await scalar(runtime, "SELECT id FROM api_keys WHERE key_hint = :h", h=key[-4:])
    revoked = await _post(dashboard, page, f"/keys/{key_id}/revoke")
    assert revoked.status_code == 200 and 'id="new-key"' not in revoked.text
    assert (await client.get(f"{API}/payments", headers=headers)).status_code == 401
    actions = "SELECT string_agg(action || ' ' || actor_kind, ',' ORDER BY id) FROM audit_log"
    assert await scalar(runtime, actions) == "key.create member,key.revoke member"


async def test_a_developer_holds_no_live_key_an_owner_does(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "dev@s.example", "developer")
    )
    shown = await dashboard.get("/dashboard/developers")
    assert shown.status_code == 200 and "Créer une clé" not in shown.text
    refused = await _post(dashboard, "/dashboard/developers", "/keys")
    assert refused.status_code == 403
    owner = await make_member(runtime, merchant.id, "owner@s.example", "owner")
    other = dashboard.another()
    await other.signed_in_as(owner)
    key = _new_key(await _post(other, "/dashboard/developers", "/keys"))
    assert key.startswith("sk_live_")


async def test_a_rotation_keeps_the_old_keys_for_the_grace_chosen(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "dev@s.example", "developer")
    )
    page = "/dashboard/test/developers"
    new = _new_key(await _post(dashboard, page, "/keys/rotate", grace="0"))
    old = {"Authorization": f"Bearer {merchant.test_key}"}
    catch_up(clock)  # the API's clock, past the served dashboard's instant of the rotation
    assert (await client.get(f"{API}/payments", headers=old)).status_code == 401
    fresh = {"Authorization": f"Bearer {new}"}
    assert (await client.get(f"{API}/payments", headers=fresh)).status_code == 200
    wrong = await _post(dashboard, page, "/keys/rotate", grace="1an")
    assert wrong.status_code == 422 and "Délai inconnu" in wrong.text


async def test_another_merchants_key_is_a_404_and_stays_usable(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "dev@s.example", "developer")
    )
    theirs = await scalar(
        runtime,
        "SELECT id FROM api_keys WHERE merchant_id = :m AND NOT livemode",
        m=other.id,
    )
    answer = await _post(dashboard, "/dashboard/test/developers", f"/keys/{theirs}/revoke")
    assert answer.status_code == 404
    still = {"Authorization": f"Bearer {other.test_key}"}
    assert (await client.get(f"{API}/payments", headers=still)).status_code == 200


_NEW_SECRET = re.compile(r'id="new-secret" class="wrap">([^<]+)<')


async def test_an_endpoint_set_here_receives_a_signed_test_event_and_resends_a_failed_one(
    runtime: Runtime, clock: ManualClock, worker: Worker, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    await _as_developer(dashboard, runtime, merchant.id)
    page = "/dashboard/test/developers"
    with Receiver() as receiver:
        receiver.answer(500)  # the first attempt fails: the delivery waits for a retry
        saved = await _post(dashboard, page, "/webhook", url=receiver.url)
        assert saved.status_code == 200 and 'id="action-done"' in saved.text
        rotated = await _post(dashboard, page, "/webhook/secret")
        found = _NEW_SECRET.search(rotated.text)
        assert found is not None, rotated.text
        secret = html.unescape(found.group(1))
        sent = await _post(dashboard, page, "/webhook/test")
        assert f"Événement de test envoyé à {receiver.url}" in html.unescape(sent.text)
        catch_up(clock)  # the worker's clock, past the served dashboard's instant of the event
        await worker.drain()
        [arrived] = await receiver.wait_for(1)
        event = verify(arrived.body, arrived.headers["x-service-signature"], secret)
        assert event.event == "webhook.test"
        listed = await dashboard.get(page)
        delivery_id = await scalar(runtime, "SELECT id FROM webhook_deliveries")
        assert f'id="delivery-{delivery_id}"' in listed.text
        again = await _post(dashboard, page, f"/webhook/deliveries/{delivery_id}/resend")
        assert again.status_code == 200 and "Livraison renvoyée" in again.text
    actions = "SELECT string_agg(action, ',' ORDER BY id) FROM audit_log"
    assert await scalar(runtime, actions) == (
        "webhook_endpoint.set,webhook_endpoint.rotate_secret,webhook_delivery.resend"
    )


async def test_another_merchants_delivery_is_a_404(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    with Receiver() as receiver:
        await set_endpoint(client, other, receiver.url)
        sent = await client.post(f"{API}/webhooks/test", headers=other.headers())
        assert sent.status_code in (200, 201), sent.text
    theirs = await scalar(runtime, "SELECT id FROM webhook_deliveries")
    await _as_developer(dashboard, runtime, merchant.id)
    page = "/dashboard/test/developers"
    assert f"delivery-{theirs}" not in (await dashboard.get(page)).text
    answer = await _post(dashboard, page, f"/webhook/deliveries/{theirs}/resend")
    assert answer.status_code == 404
