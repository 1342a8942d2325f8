"""Live money through Orange Money Web Payment, end to end over real HTTP: the API with a
live key, the worker, Orange's contract fake (its hosted page, notifications bearing the
payment's notif_token, the transaction status), and Cauri's callback route served for the
fake to notify (issue 11). Each test ends with the ledger reconciled (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cauri.connectors import history
from cauri.connectors.service import connectors
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.fakes.orange_money import OrangeMoneyFake
from tests.operators.live import (
    callbacks_received,
    connect,
    event_types,
    open_plan,
    pay_instalment,
    read,
    run,
    status_of,
)
from tests.payments.builders import merchant_available, pay
from tests.support import MerchantKeys, ServerThread, assert_error, make_merchant, momo_body

CONNECTOR = "orange-dev"
CLIENT_ID, CLIENT_SECRET, MERCHANT_KEY = "orange-client", "orange-secret", "a1b2c3d4"
NUMBER = "2250712345678"
RETURN_URL = "https://shop.example/merci"


@pytest.fixture
def fake() -> Iterator[OrangeMoneyFake]:
    with OrangeMoneyFake(
        client_id=CLIENT_ID, client_secret=CLIENT_SECRET, merchant_key=MERCHANT_KEY
    ) as fake:
        yield fake


@pytest.fixture
async def merchant(runtime: Runtime, fake: OrangeMoneyFake) -> MerchantKeys:
    await connect(
        runtime,
        name=CONNECTOR,
        kind="orange_money",
        base_url=fake.base_url,
        settings={"country": "dev", "return_url": RETURN_URL},
        secrets={
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "merchant_key": MERCHANT_KEY,
        },
        operators=["orange_ci"],
        actions=("collect",),
    )
    return await make_merchant(runtime)


async def live_payment(
    client: httpx.AsyncClient, merchant: MerchantKeys, **body: Any
) -> dict[str, Any]:
    response = await pay(
        client,
        merchant.headers(livemode=True),
        momo_body(operator="orange_ci", phone_number=NUMBER) | body,
    )
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def pay_token_of(fake: OrangeMoneyFake, reference: str) -> str:
    return fake.payment(reference.replace("-", "")[:30]).pay_token


async def test_a_payment_is_paid_on_oranges_page_and_confirmed_by_the_status(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: OrangeMoneyFake,
    merchant: MerchantKeys,
    callbacks: ServerThread,
) -> None:
    payment = await live_payment(client, merchant, return_url="https://shop.example/o/7")
    reference = payment["reference"]
    assert payment["status"] == "pending"
    [request] = fake.posts("webpayment")
    assert (
        request.body
        == {
            "merchant_key": MERCHANT_KEY,
            "currency": "OUV",  # Orange's sandbox currency
            "order_id": reference.replace("-", "")[:30],
            "amount": 1000,
            "return_url": "https://shop.example/o/7",
            "cancel_url": "https://shop.example/o/7",
            "notif_url": f"{callbacks.base_url}/api/v1/operator-callbacks/{CONNECTOR}/{reference}",
            "lang": "fr",
            "reference": "Paiement",
        }
    )
    pay_token = pay_token_of(fake, reference)
    # The customer is sent to Orange's page.
    assert payment["payment_url"] == f"{fake.base_url}/payment/pay_token/{pay_token}"
    fake.pay(pay_token)
    await callbacks_received(runtime)
    await run(runtime, worker)  # the notification is a hint: the status query settles it
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert await event_types(runtime, reference) == ["payment.succeeded"]
    async with runtime.sessionmaker() as session:
        [operation] = await history.exchanges(session, reference)
    # The merchant_key is a credential: recorded masked.
    assert all(MERCHANT_KEY not in (e.request_body or "") for e in operation.exchanges)
    assert [e.action for e in operation.exchanges][-1] == "transactionstatus"


@pytest.mark.parametrize("token", ["0" * 32, "é" * 32])
async def test_a_notification_with_another_token_is_refused(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: OrangeMoneyFake,
    merchant: MerchantKeys,
    callbacks: ServerThread,
    token: str,
) -> None:
    payment = await live_payment(client, merchant)
    reference = payment["reference"]
    url = f"{callbacks.base_url}/api/v1/operator-callbacks/{CONNECTOR}/{reference}"
    forged = {"status": "SUCCESS", "notif_token": token, "txnid": "MP1"}
    assert fake.send_forged_notification(url, forged) == 401
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "pending"
    assert fake.posts("transactionstatus") == []  # not even a hint
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0


async def test_a_page_left_to_expire_fails_the_payment(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: OrangeMoneyFake,
    merchant: MerchantKeys,
) -> None:
    fake.lapsed_status = "EXPIRED"
    payment = await live_payment(client, merchant)
    fake.expire(pay_token_of(fake, payment["reference"]))
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "failed"
    assert await event_types(runtime, payment["reference"]) == ["payment.failed"]


async def test_lost_and_duplicated_notifications(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: OrangeMoneyFake,
    merchant: MerchantKeys,
) -> None:
    fake.notification_mode = "drop"
    lost = await live_payment(client, merchant)
    fake.pay(pay_token_of(fake, lost["reference"]))
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{lost['reference']}") == "succeeded"
    fake.notification_mode = "duplicate"
    twice = await live_payment(client, merchant, amount=500)
    fake.pay(pay_token_of(fake, twice["reference"]))
    await callbacks_received(runtime, count=2)
    await run(runtime, worker)
    assert await event_types(runtime, twice["reference"]) == ["payment.succeeded"]
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1500


async def test_the_token_is_fetched_once_and_again_when_orange_says_it_expired(
    client: httpx.AsyncClient, fake: OrangeMoneyFake, merchant: MerchantKeys
) -> None:
    await live_payment(client, merchant)
    await live_payment(client, merchant)
    assert fake.tokens_issued == 1
    fake.expire_tokens()
    await live_payment(client, merchant)
    assert fake.tokens_issued == 2
    assert len(fake.posts("webpayment")) == 4  # the refused one, sent again with a new token


async def test_refused_credentials_fail_the_payment_with_nothing_created(
    client: httpx.AsyncClient, fake: OrangeMoneyFake, merchant: MerchantKeys
) -> None:
    fake.client_secret = "rotated"
    response = await pay(
        client,
        merchant.headers(livemode=True),
        momo_body(operator="orange_ci", phone_number=NUMBER),
    )
    assert_error(response, 402, "payment_failed")
    assert fake.payments == {}


async def test_a_url_longer_than_orange_takes_is_refused_before_sending(
    client: httpx.AsyncClient, fake: OrangeMoneyFake, merchant: MerchantKeys
) -> None:
    response = await pay(
        client,
        merchant.headers(livemode=True),
        momo_body(
            operator="orange_ci",
            phone_number=NUMBER,
            return_url="https://shop.example/" + "x" * 120,
        ),
    )
    assert_error(response, 402, "payment_failed")
    assert fake.posts("webpayment") == []


async def test_a_page_lost_on_the_way_fails_the_payment_no_customer_ever_saw(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: OrangeMoneyFake,
    merchant: MerchantKeys,
) -> None:
    """Orange created the payment but its answer (the page) never came back: no customer
    can pay it; the status cannot be asked without its pay_token; the re-sent request is
    refused as a duplicate order: failed, nothing taken."""
    fake.fault("error_500_after_accept", path="webpayment")
    payment = await live_payment(client, merchant)
    assert payment["status"] == "pending" and payment["payment_url"] is None
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "failed"
    assert len(fake.posts("webpayment")) == 2


async def test_an_instalment_is_collected_through_orange(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: OrangeMoneyFake,
    merchant: MerchantKeys,
) -> None:
    reference = await open_plan(client, merchant, 3000)
    instalment = await pay_instalment(
        client,
        merchant,
        reference,
        momo_body(operator="orange_ci", phone_number=NUMBER, amount=3000),
    )
    fake.pay(pay_token_of(fake, instalment["reference"]))
    await callbacks_received(runtime)
    await run(runtime, worker)
    plan = await read(client, merchant, f"installment-plans/{reference}")
    assert plan["status"] == "succeeded"


async def test_connectors_check(
    runtime: Runtime, fake: OrangeMoneyFake, merchant: MerchantKeys
) -> None:
    async with runtime.sessionmaker() as session:
        report = await connectors.check(session, runtime.operators, CONNECTOR)
    assert report.ok, report.detail
    fake.client_secret = "rotated"
    async with runtime.sessionmaker() as session:
        report = await connectors.check(session, runtime.operators, CONNECTOR)
    assert not report.ok and "client_id/client_secret" in report.detail
