"""Issue 14 in a real headless Chromium, the actions whose effect is seen outside the console:
a key revoked from a merchant's page is refused by the API (401); a webhook resent from a
delivery's page reaches the merchant's receiver; and the console's guards as a browser meets
them: a form posted by another origin's page is refused (CSRF) and writes nothing, and a
sixth sign-in after five wrong passwords is throttled even with the right one."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from playwright.async_api import Page, expect

from cauri.kit.clock import ManualClock
from cauri.people import throttle
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.console.browsing import sign_in, submit_password
from tests.console.builders import make_staff
from tests.console.test_actions import audit_entries, catch_up
from tests.console.test_console_browser import csp_violations as csp_violations
from tests.payouts.builders import live_operator, set_limits, top_up
from tests.payouts.test_maker_checker import held, state
from tests.support import ServerThread, make_merchant, scalar
from tests.webhooks.builders import failed_delivery, set_endpoint
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.browser


async def test_a_key_revoked_from_the_merchants_page_then_gets_401(
    page: Page,
    server: ServerThread,
    client: httpx.AsyncClient,
    runtime: Runtime,
    csp_violations: list[str],
) -> None:
    merchant = await make_merchant(runtime, name="Boutique Awa")
    assert (await client.get("/api/v1/balance", headers=merchant.headers())).status_code == 200
    key_id = await scalar(
        runtime, "SELECT id FROM api_keys WHERE merchant_id = :m AND NOT livemode", m=merchant.id
    )
    await sign_in(page, server, await make_staff(runtime, "awa@cauri.example", "admin"))

    menu = page.get_by_role("navigation", name="Menu de la console")
    await menu.get_by_role("link", name="Marchands").click()
    await page.get_by_role("link", name=merchant.id).click()
    await page.get_by_role("link", name="Administrer ce marchand").click()
    await page.get_by_role("button", name=re.compile(rf"^Révoquer la clé n° {key_id} ")).click()
    await expect(page.get_by_role("status")).to_contain_text("Clé révoquée")
    await expect(page.locator("#keys")).to_contain_text("révoquée")

    answer = await client.get("/api/v1/balance", headers=merchant.headers())
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "unauthorized"
    assert await audit_entries(runtime, "key.revoke") == [("staff", "awa@cauri.example", True)]
    assert csp_violations == []


async def test_a_webhook_resent_from_its_page_reaches_the_receiver(
    page: Page,
    server: ServerThread,
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
) -> None:
    failed = await failed_delivery(client, runtime, worker)
    with Receiver() as receiver:
        await set_endpoint(client, failed.merchant, receiver.url)  # the merchant fixed it
        await sign_in(page, server, await make_staff(runtime, "koffi@cauri.example", "support"))
        menu = page.get_by_role("navigation", name="Menu de la console")
        await menu.get_by_role("link", name="Webhooks").click()
        await expect(page.locator("#failing-endpoints")).to_contain_text(failed.endpoint)
        deliveries = page.locator("#failing-deliveries")
        await deliveries.get_by_role("link", name=failed.delivery_id).click()
        await expect(page.locator("main")).to_contain_text("Échec de connexion")
        await page.get_by_role("button", name="Renvoyer").click()
        await expect(page.get_by_role("status")).to_contain_text("Renvoi demandé")
        catch_up(clock)
        await worker.drain()
        [arrived] = await receiver.wait_for(1)
    assert json.loads(arrived.body)["data"]["reference"] == failed.payment
    assert await audit_entries(runtime, "webhook_delivery.resend") == [
        ("staff", "koffi@cauri.example", True)
    ]


async def test_a_form_posted_from_another_origin_is_refused_and_writes_nothing(
    page: Page, server: ServerThread, client: httpx.AsyncClient, runtime: Runtime
) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime, name="Boutique Awa")
    await top_up(runtime, merchant.id, 100_000, livemode=True)
    await set_limits(runtime, merchant.id, approval_threshold=1_000)
    reference = await held(client, merchant, 25_000)
    await sign_in(page, server, await make_staff(runtime, "fatou@cauri.example", "finance"))

    # A page of another origin on the same site (another port of 127.0.0.1): Chromium sends
    # the SameSite=Strict cookie with its form, so the token is what stands in the way.
    hostile = "http://127.0.0.1:9/cadeau"
    form = (
        f'<form method="post" action="{server.base_url}/console/approvals/{reference}/approve">'
        '<input type="hidden" name="csrf" value="devine">'
        '<button type="submit">Recevoir mon cadeau</button></form>'
    )
    await page.route(hostile, lambda route: route.fulfill(body=form, content_type="text/html"))
    await page.goto(hostile)
    async with page.expect_response(lambda r: r.request.method == "POST") as posted:
        await page.get_by_role("button", name="Recevoir mon cadeau").click()
    assert (await posted.value).status == 403
    await expect(page.get_by_role("heading", level=1)).to_have_text("Action refusée")
    await expect(page.get_by_role("alert")).to_contain_text("ne vient pas de la console")
    assert await state(runtime, reference) == ("pending", "required", False)
    assert await scalar(runtime, "SELECT count(*) FROM payout_approvals") == 0
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0

    # The same staff member from the console's own page: accepted.
    await page.goto(f"{server.base_url}/console/approvals")
    await page.locator(f"#payout-{reference}").get_by_role("button", name="Approuver").click()
    await expect(page.get_by_role("status")).to_contain_text("approuvé")


async def test_sign_in_is_throttled_after_five_wrong_passwords(
    page: Page, server: ServerThread, runtime: Runtime
) -> None:
    member = await make_staff(runtime, "koffi@cauri.example", "support")
    for _ in range(throttle.ACCOUNT_LIMIT):
        await submit_password(page, server, member, "pas le bon mot de passe")
        await expect(page.get_by_role("alert")).to_have_text(
            "Adresse e-mail ou mot de passe incorrect."
        )
    async with page.expect_response(lambda r: r.request.method == "POST") as posted:
        await submit_password(page, server, member, member.password)  # right, too late
    refused = await posted.value
    assert refused.status == 429 and 0 < int(refused.headers["retry-after"]) <= 15 * 60 + 1
    await expect(page.get_by_role("heading", level=1)).to_have_text("Trop de tentatives")
    await expect(page.get_by_role("alert")).to_contain_text("réessayez dans")
    assert "cauri_console" not in {cookie["name"] for cookie in await page.context.cookies()}
