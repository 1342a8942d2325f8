"""Live money through Wave, end to end over real HTTP: the API with a live key, the worker,
Wave's contract fake (Wave has no sandbox: this is where the connector is proven), and
Cauri's callback route served for the fake's webhooks (issue 10). Each test ends with the
ledger reconciled (tests/conftest.py)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from cauri.connectors.service import connectors
from cauri.kit.db import unit_of_work
from cauri.merchants.service import merchants
from cauri.operators.config import ConnectorConfig
from cauri.operators.protocol import Collection, Disbursement, Outcome
from cauri.operators.wave.connector import WaveConnector
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.fakes.wave import WaveFake
from tests.operators.live import (
    callbacks_received,
    cancel_plan,
    connect,
    event_types,
    open_plan,
    pay_instalment,
    read,
    refund_payment,
    run,
    send_payout,
    status_of,
)
from tests.payments.builders import count_rows, merchant_available, pay, platform_fees, set_fee
from tests.payouts.builders import top_up
from tests.support import MerchantKeys, ServerThread, assert_error, make_merchant, momo_body

CONNECTOR = "wave-sn"
API_KEY = "wave_sn_prod_" + "CauriEndToEndKeyOfTheFakeWallet0x1"
WEBHOOK_SECRET = "wave_sn_WHS_" + "cauriendtoendsecretofthefakewebhook0123456789abcdefgh"
NUMBER = "221771234567"
RETURN_URL = "https://shop.example/merci"
# A Wave wallet is in one country: one account (one key) per country, each with a number.
NUMBERS = {"sn": NUMBER, "ci": "2250712345678", "bf": "22670123456"}


@pytest.fixture
def country() -> str:
    return "sn"


@pytest.fixture
def fake(callbacks: ServerThread, country: str) -> Iterator[WaveFake]:
    url = f"{callbacks.base_url}/api/v1/operator-callbacks/{CONNECTOR}"
    key = API_KEY.replace("_sn_", f"_{country}_")
    with WaveFake(key, webhook_secret=WEBHOOK_SECRET, webhook_url=url) as fake:
        yield fake


@pytest.fixture
async def merchant(runtime: Runtime, fake: WaveFake, country: str) -> MerchantKeys:
    await connect(
        runtime,
        name=CONNECTOR,
        kind="wave",
        environment="production",
        base_url=fake.base_url,
        settings={"return_url": RETURN_URL},
        secrets={"api_key": fake.api_key, "webhook_secret": WEBHOOK_SECRET},
        operators=[f"wave_{country}"],
    )
    return await make_merchant(runtime)


async def live_payment(
    client: httpx.AsyncClient, merchant: MerchantKeys, **body: Any
) -> dict[str, Any]:
    response = await pay(
        client,
        merchant.headers(livemode=True),
        momo_body(operator="wave_sn", phone_number=NUMBER) | body,
    )
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def session_of(fake: WaveFake, reference: str) -> str:
    [session] = [s for s in fake.sessions.values() if s.client_reference == reference]
    return session.id


async def test_a_payment_is_a_checkout_session_the_customer_approves_on_wave(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
) -> None:
    payment = await live_payment(client, merchant, return_url="https://shop.example/order/7")
    reference = payment["reference"]
    assert payment["status"] == "pending"
    [request] = fake.posts("checkout")
    assert request.body == {
        "amount": "1000",
        "currency": "XOF",
        "client_reference": reference,
        "success_url": "https://shop.example/order/7",
        "error_url": "https://shop.example/order/7",
        "restrict_payer_mobile": f"+{NUMBER}",
    }
    session_id = session_of(fake, reference)
    # The customer is sent to Wave's launch URL: the payment's payment_url.
    assert payment["payment_url"] == fake.view_session(fake.sessions[session_id])["wave_launch_url"]
    fake.pay(session_id)
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert await event_types(runtime, reference) == ["payment.succeeded"]


@pytest.mark.parametrize("country", sorted(NUMBERS))
async def test_each_wave_country_collects_refunds_and_pays_out(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    country: str,
) -> None:
    operator, number = f"wave_{country}", NUMBERS[country]
    extra: dict[str, Any] = {"operator": operator, "phone_number": number}
    if operator == "wave_bf":
        extra["otp"] = "123456"  # the catalogue asks it of wave_bf; Wave's page needs none
    payment = await live_payment(client, merchant, **extra)
    reference = payment["reference"]
    fake.pay(session_of(fake, reference))
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    await refund_payment(client, merchant, reference)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "refunded"
    await top_up(runtime, merchant.id, 5000, livemode=True)
    body = {"amount": 1000, "phone_number": number, "operator": operator}
    assert (await send_payout(client, merchant, body))["status"] == "succeeded"
    [sent] = fake.payouts.values()
    assert sent.mobile == f"+{number}"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000


async def test_without_a_return_url_the_customer_comes_back_to_the_accounts_page(
    client: httpx.AsyncClient, fake: WaveFake, merchant: MerchantKeys
) -> None:
    await live_payment(client, merchant)
    [request] = fake.posts("checkout")
    assert request.body["success_url"] == request.body["error_url"] == RETURN_URL


async def test_a_session_that_expires_unpaid_fails_the_payment(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
) -> None:
    payment = await live_payment(client, merchant)
    reference = payment["reference"]
    fake.expire(session_of(fake, reference))  # Wave sends no event for an expiry
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{reference}") == "failed"
    assert await event_types(runtime, reference) == ["payment.failed"]
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0


async def test_a_failed_attempt_leaves_the_customer_free_to_pay_again(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
) -> None:
    payment = await live_payment(client, merchant)
    reference = payment["reference"]
    session_id = session_of(fake, reference)
    fake.fail_payment(session_id, "insufficient-funds")
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "pending"
    fake.pay(session_id)
    await callbacks_received(runtime, count=2)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    assert await event_types(runtime, reference) == ["payment.succeeded"]


async def test_a_lost_webhook_is_caught_by_the_status_schedule(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
) -> None:
    fake.webhook_mode = "drop"
    payment = await live_payment(client, merchant)
    fake.pay(session_of(fake, payment["reference"]))
    await run(runtime, worker, 29)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "pending"
    await run(runtime, worker, 1)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "succeeded"


async def test_duplicated_and_reordered_webhooks_apply_once_each(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
) -> None:
    fake.webhook_mode = "duplicate"
    first = await live_payment(client, merchant)
    fake.pay(session_of(fake, first["reference"]))
    await callbacks_received(runtime, count=2)
    fake.webhook_mode = "reorder"
    second = await live_payment(client, merchant, amount=500)
    third = await live_payment(client, merchant, amount=700)
    fake.pay(session_of(fake, second["reference"]))  # held back…
    fake.pay(session_of(fake, third["reference"]))  # …and sent after this one
    await callbacks_received(runtime, count=4)
    await run(runtime, worker)
    await run(runtime, worker, 30)
    for payment in (first, second, third):
        assert await status_of(client, merchant, f"payments/{payment['reference']}") == (
            "succeeded"
        )
        assert await event_types(runtime, payment["reference"]) == ["payment.succeeded"]
    assert await merchant_available(runtime, merchant.id, livemode=True) == 2200


@pytest.mark.parametrize("forgery", ["wrong_secret", "stale", "unsigned"])
async def test_a_forged_webhook_changes_nothing(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    forgery: str,
) -> None:
    payment = await live_payment(client, merchant)
    reference = payment["reference"]
    session = fake.view_session(fake.sessions[session_of(fake, reference)])
    paid = session | {"checkout_status": "complete", "payment_status": "succeeded"}
    event = {"id": "EV_forged", "type": "checkout.session.completed", "data": paid}
    answer = fake.send_forged_webhook(
        event,
        secret=WEBHOOK_SECRET if forgery == "stale" else None,
        timestamp=int(time.time()) - 3600 if forgery == "stale" else None,
        signed=forgery != "unsigned",
    )
    assert answer == 401
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{reference}") == "pending"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    assert await event_types(runtime, reference) == []


async def test_an_instalment_is_collected_through_wave(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
) -> None:
    reference = await open_plan(client, merchant, 3000)
    instalment = await pay_instalment(
        client, merchant, reference, momo_body(operator="wave_sn", phone_number=NUMBER, amount=3000)
    )
    fake.pay(session_of(fake, instalment["reference"]))
    await callbacks_received(runtime)
    await run(runtime, worker)
    plan = await read(client, merchant, f"installment-plans/{reference}")
    assert plan["status"] == "succeeded" and plan["paid_amount"] == 3000
    assert await merchant_available(runtime, merchant.id, livemode=True) == 3000


async def test_a_payout_is_a_wave_payout_under_our_idempotency_key(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "wave_sn", "reason": "Loyer"}
    payout = await send_payout(client, merchant, body)
    [request] = fake.posts("payout")
    assert request.body == {
        "currency": "XOF",
        "receive_amount": "1000",
        "mobile": f"+{NUMBER}",
        "client_reference": request.headers["idempotency-key"],
        "payment_reason": "Loyer",
    }
    assert payout["status"] == "succeeded"  # Wave answered at once
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000


@pytest.mark.parametrize(
    "fault", ["hang_after_accept", "reset_after_accept", "error_500_after_accept"]
)
async def test_a_payout_accepted_then_unanswered_is_never_sent_twice(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    fault: str,
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    fake.hold = True
    fake.fault(fault, path="/v1/payout")
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "wave_sn"}
    payout = await send_payout(client, merchant, body)
    assert payout["status"] == "pending"
    for delay in (30, 120, 600):
        await run(runtime, worker, delay)
        assert await merchant_available(runtime, merchant.id, livemode=True) == 4000
    assert len(fake.posts("payout")) == 1
    [sent] = fake.payouts.values()
    fake.settle_payout(sent.id, "failed", "recipient-account-blocked")
    await run(runtime, worker, 3600)
    assert await status_of(client, merchant, f"payouts/{payout['reference']}") == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
    await run(runtime, worker, 6 * 3600)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
    assert len(fake.posts("payout")) == 1


async def test_a_payout_wave_never_received_is_sent_again_under_the_same_key(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    fake.fault("error_500", path="/v1/payout")  # refused before Wave recorded anything
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "wave_sn"}
    payout = await send_payout(client, merchant, body)
    assert payout["status"] == "pending"
    assert fake.payouts == {}
    await run(runtime, worker, 30)  # not found by its reference: sent again, paid
    keys = [r.headers["idempotency-key"] for r in fake.posts("payout")]
    assert len(keys) == 2 and keys[0] == keys[1]
    assert len(fake.payouts) == 1
    assert await status_of(client, merchant, f"payouts/{payout['reference']}") == ("succeeded")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000


async def test_a_refund_refunds_the_checkout_session(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
) -> None:
    payment = await live_payment(client, merchant)
    session_id = session_of(fake, payment["reference"])
    fake.pay(session_id)
    await callbacks_received(runtime)
    await run(runtime, worker)
    await refund_payment(client, merchant, payment["reference"])
    [refund] = fake.posts("refund")
    assert refund.path == f"/v1/checkout/sessions/{session_id}/refund"
    assert fake.sessions[session_id].refunded
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "refunded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0


async def _paid_with_commission(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    bearer: str,
) -> dict[str, Any]:
    """A 10,000 XOF Wave payment with a 1 % commission borne by `bearer`, paid, on a balance
    topped up with 1,000 XOF."""
    await set_fee(runtime, merchant.id, "wave_sn", percent="1")
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_fee_bearer(session, merchant.id, bearer)
    await top_up(runtime, merchant.id, 1000, livemode=True)
    payment = await live_payment(client, merchant, amount=10_000)
    fake.pay(session_of(fake, payment["reference"]))
    await callbacks_received(runtime)
    await run(runtime, worker)
    return payment


@pytest.mark.parametrize("bearer", ["customer", "merchant"])
async def test_a_partial_refund_of_a_wave_payment_is_refused_before_anything_is_written(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    bearer: str,
) -> None:
    """Issue 23 (1): Wave refunds a session whole; a partial refund would send back all of
    it and debit the merchant a part."""
    payment = await _paid_with_commission(client, runtime, worker, fake, merchant, bearer)
    before = await merchant_available(runtime, merchant.id, livemode=True)
    response = await client.post(
        f"/api/v1/payments/{payment['reference']}/refund",
        json={"amount": 10},
        headers=merchant.headers(livemode=True),
    )
    assert_error(response, 422, "invalid_request")
    assert "amount" in response.json()["error"]["details"]
    assert fake.posts("refund") == []
    assert await count_rows(runtime, "refunds") == 0
    assert await merchant_available(runtime, merchant.id, livemode=True) == before


@pytest.mark.parametrize("bearer", ["customer", "merchant"])
async def test_a_whole_wave_refund_takes_from_the_ledger_what_wave_gives_back(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
    bearer: str,
) -> None:
    """The customer gets back the session's total (the commission too when they paid it):
    the merchant's balance is debited that total, the platform keeps its commission, and
    the refund's amount says what the customer got; a second refund is 409."""
    payment = await _paid_with_commission(client, runtime, worker, fake, merchant, bearer)
    session_id = session_of(fake, payment["reference"])
    total = 10_100 if bearer == "customer" else 10_000
    assert fake.sessions[session_id].amount == str(total)
    assert await platform_fees(runtime, livemode=True) == 100
    refund = await refund_payment(client, merchant, payment["reference"])
    assert (refund["amount"], refund["status"]) == (total, "succeeded")
    assert fake.sessions[session_id].refunded
    await run(runtime, worker)
    # 1,000 topped up + what the payment credited − what Wave gave back.
    assert await merchant_available(runtime, merchant.id, livemode=True) == 900
    assert await platform_fees(runtime, livemode=True) == 100
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "refunded"
    again = await client.post(
        f"/api/v1/payments/{payment['reference']}/refund", headers=merchant.headers(True)
    )
    assert_error(again, 409, "conflict")
    assert len(fake.posts("refund")) == 1


async def test_a_cancelled_plan_is_refunded_by_a_wave_payout(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: WaveFake,
    merchant: MerchantKeys,
) -> None:
    reference = await open_plan(client, merchant, 5000)
    instalment = await pay_instalment(
        client, merchant, reference, momo_body(operator="wave_sn", phone_number=NUMBER, amount=2000)
    )
    fake.pay(session_of(fake, instalment["reference"]))
    await callbacks_received(runtime)
    await run(runtime, worker)
    await cancel_plan(client, merchant, reference)
    await run(runtime, worker)  # the refund job sends the payout
    [payout] = fake.posts("payout")
    assert payout.body["receive_amount"] == "2000" and payout.body["mobile"] == f"+{NUMBER}"
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"installment-plans/{reference}") == "refunded"


async def test_a_revoked_key_fails_the_payment_with_nothing_taken(
    client: httpx.AsyncClient, fake: WaveFake, merchant: MerchantKeys
) -> None:
    fake.revoke()
    response = await pay(
        client,
        merchant.headers(livemode=True),
        momo_body(operator="wave_sn", phone_number=NUMBER),
    )
    assert_error(response, 402, "payment_failed")
    assert fake.sessions == {}


async def test_connectors_check_answers_plainly_against_production_credentials(
    runtime: Runtime, fake: WaveFake, merchant: MerchantKeys
) -> None:
    async def check() -> tuple[bool, str, dict[str, Any]]:
        async with runtime.sessionmaker() as session:
            report = await connectors.check(session, runtime.operators, CONNECTOR)
        return report.ok, report.detail, dict(report.facts or {})

    ok, detail, facts = await check()
    assert ok, detail
    assert facts["checkout"] == facts["payout"] == "allowed"
    assert facts["balance"].endswith("XOF")
    fake.keys[API_KEY].permissions.discard("payouts_api")
    ok, detail, _ = await check()
    assert not ok and "payout" in detail and "Wave Business Portal" in detail
    fake.revoke()
    ok, detail, _ = await check()
    assert not ok and "refused the api_key" in detail
    assert fake.sessions == {} and fake.payouts == {}  # a check moves no money


async def test_an_authentic_event_about_nothing_of_ours_is_acknowledged(
    runtime: Runtime, fake: WaveFake, merchant: MerchantKeys
) -> None:
    """A payment to the wallet outside any session: Wave's, signed; answered 2xx so that
    Wave does not send it again for days, and otherwise ignored."""
    event = {"id": "EV_other", "type": "merchant.payment_received", "data": {"amount": "500"}}
    assert fake.send_forged_webhook(event, secret=WEBHOOK_SECRET) == 200
    forged = fake.send_forged_webhook(event)  # the same, not signed by Wave's secret
    assert forged == 401


async def test_the_connector_never_asks_wave_for_a_refund_of_another_amount(
    fake: WaveFake,
) -> None:
    """The connector's own guard: a session is refunded only for exactly what it collected
    (Wave would send back all of it whatever Cauri asked)."""
    connector = WaveConnector(
        ConnectorConfig(
            name=CONNECTOR,
            kind="wave",
            environment="production",
            base_url=fake.base_url,
            settings={"return_url": RETURN_URL},
            secrets={"api_key": fake.api_key, "webhook_secret": WEBHOOK_SECRET},
        )
    )
    try:
        reference = str(uuid.uuid4())
        collection = Collection(reference, "wave_sn", 10_100, "XOF", NUMBER, None)
        assert (await connector.collect(collection)).outcome is Outcome.PENDING
        fake.pay(session_of(fake, reference))
        refund = Disbursement(
            str(uuid.uuid4()), "wave_sn", 10_000, "XOF", NUMBER, refund_of=reference
        )
        refused = await connector.refund(refund)
        assert (refused.outcome, refused.reason) == (Outcome.FAILED, "partial_refund_not_offered")
        assert fake.posts("refund") == []
        whole = await connector.refund(replace(refund, amount=10_100))
        assert whole.outcome is Outcome.SUCCEEDED
        assert len(fake.posts("refund")) == 1
    finally:
        await connector.aclose()
