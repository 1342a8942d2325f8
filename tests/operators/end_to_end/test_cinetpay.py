"""Live card and Mobile Money payments through CinetPay, end to end over real HTTP: the API
with a live key, the worker, CinetPay's contract fake (its hosted page, x-token notifications,
the status check), Cauri's card page handing the customer over, and a live card payment
driven in headless Chromium from Cauri's page through CinetPay's page and back (issue 11)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, Route, expect

from cauri.connectors.service import connectors
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.fakes.cinetpay import CinetPayFake
from tests.operators.live import (
    callbacks_received,
    connect,
    event_types,
    run,
    send_payout,
    status_of,
)
from tests.payments.builders import merchant_available, pay
from tests.payouts.builders import PAYOUTS, top_up
from tests.support import (
    MerchantKeys,
    ServerThread,
    assert_error,
    card_body,
    make_merchant,
    momo_body,
)
from tests.web.conftest import browser, page  # noqa: F401 (the browser's fixtures)

CONNECTOR = "cinetpay"
APIKEY, SITE_ID, SECRET_KEY, PASSWORD = "cp-apikey", "445160", "cp-secret-key", "cp-password"
CARD_HOLDER = {
    "card_phone_number": "2250700000000",
    "card_address": "Boulevard Latrille",
    "card_city": "Abidjan",
    "card_country": "CI",
    "card_state": "Abidjan",
    "card_zip_code": "00225",
}
NUMBER = "2250712345678"


@pytest.fixture
def fake() -> Iterator[CinetPayFake]:
    with CinetPayFake(
        apikey=APIKEY, site_id=SITE_ID, secret_key=SECRET_KEY, transfer_password=PASSWORD
    ) as fake:
        yield fake


@pytest.fixture
async def merchant(runtime: Runtime, fake: CinetPayFake) -> MerchantKeys:
    await connect(
        runtime,
        name=CONNECTOR,
        kind="cinetpay",
        base_url=fake.checkout_base_url,
        settings={"site_id": SITE_ID, "return_url": "https://shop.example/merci", **CARD_HOLDER},
        secrets={"apikey": APIKEY, "secret_key": SECRET_KEY},
        operators=["VISA", "MASTERCARD", "orange_ci", "moov_tg"],
        actions=("collect",),
    )
    return await make_merchant(runtime)


async def live_card(client: httpx.AsyncClient, merchant: MerchantKeys, **body: Any) -> Any:
    response = await pay(client, merchant.headers(livemode=True), card_body(**body))
    assert response.status_code == 201, response.text
    return response.json()["data"]


@pytest.mark.browser
async def test_a_live_card_payment_is_paid_on_cinetpays_page_from_cauris(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: CinetPayFake,
    merchant: MerchantKeys,
    callbacks: ServerThread,
    page: Page,  # noqa: F811
) -> None:
    # The merchant's return page is https (live mode requires it) on a host this machine
    # cannot reach: where Cauri's return path sends the customer is read off its redirect,
    # and the merchant's page is played by the browser's interception.
    thanks = "https://shop.example/merci?commande=42"
    landed: list[str] = []

    async def through_cauri(route: Route) -> None:
        answer = await route.fetch(max_redirects=0)
        landed.append(answer.headers["location"])
        await route.fulfill(status=200, content_type="text/html", body="<h1>Merci</h1>")

    await page.route("**/pay/*/return", through_cauri)
    card = card_body(return_url=thanks)
    response = await client.post(
        "/api/v1/payments", json=card, headers=merchant.headers(livemode=True)
    )
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    reference = payment["reference"]
    # The merchant's customer goes to Cauri's page, as for every card payment.
    assert payment["payment_url"] == f"{callbacks.base_url}/pay/{reference}"
    [request] = fake.posts("payment")
    assert request.body["channels"] == "CREDIT_CARD"
    assert request.body["transaction_id"] == reference
    assert request.body["amount"] == 5000
    assert request.body["customer_surname"] == "Awa"
    assert request.body["customer_name"] == "Diallo"
    assert request.body["customer_city"] == "Abidjan"
    assert request.body["return_url"] == f"{callbacks.base_url}/pay/{reference}/return"
    assert request.body["notify_url"] == (
        f"{callbacks.base_url}/api/v1/operator-callbacks/{CONNECTOR}/{reference}"
    )
    # Cauri's page hands the customer to CinetPay's, who pays by card there.
    await page.goto(payment["payment_url"])
    assert page.url == fake.payment_url(reference)
    await page.select_option("#payment_method", "VISAM")
    await page.click("#pay")
    # Back through Cauri's return path, on to the merchant's page with the reference.
    await page.wait_for_url(f"{callbacks.base_url}/pay/{reference}/return")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Merci")
    [url] = landed
    assert url.startswith("https://shop.example/merci?commande=42&")
    assert f"reference={reference}" in url
    # CinetPay's notification (x-token) prompts the status check, which decides.
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
    assert await event_types(runtime, reference) == ["payment.succeeded"]
    # Decided: Cauri's page sends the customer to the merchant, with the status.
    async with httpx.AsyncClient() as customer:
        again = await customer.get(payment["payment_url"])
    assert again.status_code == 303
    assert "status=succeeded" in again.headers["location"]


async def test_a_mobile_money_payment_goes_to_cinetpays_page(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: CinetPayFake,
    merchant: MerchantKeys,
) -> None:
    response = await pay(
        client,
        merchant.headers(livemode=True),
        momo_body(operator="orange_ci", phone_number=NUMBER),
    )
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    reference = payment["reference"]
    assert payment["payment_url"] == fake.payment_url(reference)
    [request] = fake.posts("payment")
    assert request.body["channels"] == "MOBILE_MONEY"
    assert request.body["return_url"] == "https://shop.example/merci"
    fake.pay(reference, method="OM")
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"


@pytest.mark.parametrize("forgery", ["wrong_secret", "unsigned", "tampered", "not_ascii"])
async def test_a_forged_notification_changes_nothing(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: CinetPayFake,
    merchant: MerchantKeys,
    callbacks: ServerThread,
    forgery: str,
) -> None:
    fake.notify_mode = "drop"
    payment = await live_card(client, merchant)
    reference = payment["reference"]
    fields = fake.notification_fields(fake.payments[reference])
    url = f"{callbacks.base_url}/api/v1/operator-callbacks/{CONNECTOR}/{reference}"
    if forgery == "tampered":
        from tests.fakes.cinetpay import x_token

        token = x_token(fields, SECRET_KEY)
        fields = fields | {"cpm_amount": "1"}
        async with httpx.AsyncClient() as forger:
            answer = (await forger.post(url, data=fields, headers={"x-token": token})).status_code
    elif forgery == "not_ascii":
        # A header of Latin-1 bytes: as wrong as any other token, not a 500.
        async with httpx.AsyncClient() as forger:
            headers = {"x-token": "é".encode("latin-1") * 64}
            answer = (await forger.post(url, data=fields, headers=headers)).status_code
    else:
        answer = fake.send_forged_notification(url, fields, signed=forgery != "unsigned")
    assert answer == 401
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "pending"
    assert fake.posts("check") == []  # not even a hint


async def test_a_refused_card_fails_and_a_lost_notification_is_caught(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: CinetPayFake,
    merchant: MerchantKeys,
) -> None:
    fake.notify_mode = "drop"
    refused = await live_card(client, merchant)
    paid = await live_card(client, merchant, amount=2500)
    fake.refuse(refused["reference"], code="600")
    fake.pay(paid["reference"], method="VISAM")
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{refused['reference']}") == "failed"
    assert await status_of(client, merchant, f"payments/{paid['reference']}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 2500


async def test_a_card_payment_waiting_past_the_card_ttl_is_not_failed_by_guess(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: CinetPayFake,
    merchant: MerchantKeys,
) -> None:
    """Live, only CinetPay's answer may fail a card payment: the customer may still be on its
    page when Cauri's card TTL runs out."""
    fake.notify_mode = "drop"
    payment = await live_card(client, merchant)
    await run(runtime, worker, runtime.settings.card_payment_ttl + 1)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "pending"
    fake.pay(payment["reference"], method="VISAM")
    await run(runtime, worker, 3600)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "succeeded"


async def test_amounts_cinetpay_refuses_and_refused_credentials_send_nothing_twice(
    client: httpx.AsyncClient, fake: CinetPayFake, merchant: MerchantKeys
) -> None:
    response = await pay(client, merchant.headers(livemode=True), card_body(amount=5001))
    assert_error(response, 402, "payment_failed")
    assert fake.posts("payment") == []
    fake.apikey = "rotated"
    response = await pay(client, merchant.headers(livemode=True), card_body())
    assert_error(response, 402, "payment_failed")
    assert fake.payments == {}


async def test_connectors_check(
    runtime: Runtime, fake: CinetPayFake, merchant: MerchantKeys
) -> None:
    async with runtime.sessionmaker() as session:
        report = await connectors.check(session, runtime.operators, CONNECTOR)
    assert report.ok, report.detail
    fake.apikey = "rotated"
    async with runtime.sessionmaker() as session:
        report = await connectors.check(session, runtime.operators, CONNECTOR)
    assert not report.ok and "apikey/site_id" in report.detail


@pytest.fixture
async def with_transfers(runtime: Runtime, fake: CinetPayFake, merchant: MerchantKeys) -> None:
    """The same account, given CinetPay's Transfer API: payouts go through it."""
    await connect(
        runtime,
        name=CONNECTOR,
        kind="cinetpay",
        base_url=fake.checkout_base_url,
        settings={
            "site_id": SITE_ID,
            "return_url": "https://shop.example/merci",
            "transfer_base_url": fake.transfer_base_url,
            **CARD_HOLDER,
        },
        secrets={"apikey": APIKEY, "secret_key": SECRET_KEY, "transfer_password": PASSWORD},
        operators=["orange_ci"],
        actions=("collect", "disburse"),
    )


@pytest.mark.usefixtures("with_transfers")
async def test_a_payout_is_a_cinetpay_transfer(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: CinetPayFake,
    merchant: MerchantKeys,
) -> None:
    await top_up(runtime, merchant.id, 10_000, livemode=True)
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "orange_ci"}
    payout = await send_payout(client, merchant, body)
    assert payout["status"] == "pending"
    [transfer] = fake.transfers.values()
    assert (transfer.prefix, transfer.phone, transfer.amount) == ("225", NUMBER[3:], 1000)
    await callbacks_received(runtime)  # unsigned: a hint, the status check decides
    await run(runtime, worker)
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payouts/{payout['reference']}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 9000
    # A second payout to the same beneficiary: already a contact, sent all the same.
    second = await send_payout(client, merchant, body)
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payouts/{second['reference']}") == "succeeded"


@pytest.mark.usefixtures("with_transfers")
async def test_a_refused_transfer_is_recredited_and_one_unanswered_never_sent_twice(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: CinetPayFake,
    merchant: MerchantKeys,
) -> None:
    await top_up(runtime, merchant.id, 10_000, livemode=True)
    fake.outcome_for(NUMBER[3:], "REJ", "Numéro inconnu")  # the national number
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "orange_ci"}
    refused = await send_payout(client, merchant, body)
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payouts/{refused['reference']}") == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 10_000
    fake.outcome_for(NUMBER[3:], "VAL")
    fake.hold = True
    fake.fault("hang_after_accept", path="/v1/transfer/money/send")
    waiting = await send_payout(client, merchant, body)
    assert waiting["status"] == "pending"
    for delay in (30, 120):
        await run(runtime, worker, delay)
    assert len(fake.posts("transfer")) == 2  # the refused one, and this one: once
    [held] = [t for t in fake.transfers.values() if t.treatment_status not in ("VAL", "REJ")]
    fake.settle_transfer(held.client_transaction_id, "VAL")
    await run(runtime, worker, 600)
    assert await status_of(client, merchant, f"payouts/{waiting['reference']}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 9000


@pytest.mark.usefixtures("with_transfers")
@pytest.mark.parametrize("path", ["/v1/transfer/money/send", "/v1/transfer/contact"])
async def test_a_500_is_no_refusal_a_transfer_accepted_before_it_is_paid_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: CinetPayFake,
    merchant: MerchantKeys,
    path: str,
) -> None:
    """Found by the chaos campaign (CI, seed 50792): CinetPay's 500 carries a body with a
    `code` ("500"), which was read as a refusal: the payout failed and its amount went back
    to the balance while CinetPay paid it. A 5xx or a 429 says nothing: the transfer waits
    for its status, which settles it."""
    await top_up(runtime, merchant.id, 10_000, livemode=True)
    fault = "error_500_after_accept" if path.endswith("send") else "error_500"
    fake.fault(fault, path=path)
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "orange_ci"}
    payout = await send_payout(client, merchant, body)
    assert payout["status"] == "pending"
    for delay in (30, 120):
        await run(runtime, worker, delay)
    assert await status_of(client, merchant, f"payouts/{payout['reference']}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 9000
    assert len(fake.transfers) == 1  # paid once


async def test_without_the_transfer_api_a_payout_route_fails_with_nothing_taken(
    client: httpx.AsyncClient, runtime: Runtime, fake: CinetPayFake, merchant: MerchantKeys
) -> None:
    async with runtime.sessionmaker() as session:
        await connectors.set_routes(
            session, "orange_ci", {"disburse": CONNECTOR}, runtime.clock.now()
        )
        await session.commit()
    await top_up(runtime, merchant.id, 5000, livemode=True)
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "orange_ci"}
    response = await client.post(PAYOUTS, json=body, headers=merchant.headers(livemode=True))
    assert_error(response, 402, "payout_failed")
    assert fake.transfers == {}
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
