"""Live money through MTN MoMo, end to end over real HTTP: the API with a live key, the
worker, MTN's contract fake, and Cauri's callback route served for the fake to call back
(issue 9, part 5). Each test ends with the ledger reconciled (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cauri.connectors import history
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.fakes.mtn_momo import MtnMomoFake
from tests.operators.live import (
    callbacks_received,
    cancel_plan,
    event_types,
    open_plan,
    pay_instalment,
    read,
    refund_payment,
    run,
    send_payout,
)
from tests.operators.mtn_live import CONNECTOR, NUMBER, mtn_fake, wire
from tests.payments.builders import merchant_available, pay
from tests.payouts.builders import top_up
from tests.support import (
    MerchantKeys,
    ServerThread,
    assert_error,
    make_merchant,
    momo_body,
    scalar,
)


@pytest.fixture
def fake() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        yield fake


@pytest.fixture
async def merchant(runtime: Runtime, fake: MtnMomoFake) -> MerchantKeys:
    await wire(runtime, fake)
    return await make_merchant(runtime)


async def live_payment(
    client: httpx.AsyncClient, merchant: MerchantKeys, number: str = NUMBER, amount: int = 1000
) -> dict[str, Any]:
    body = momo_body(phone_number=number, amount=amount)
    response = await pay(client, merchant.headers(livemode=True), body)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def test_a_payment_is_requested_from_mtn_and_settled_by_its_callback(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
    callbacks: ServerThread,
) -> None:
    payment = await live_payment(client, merchant)
    assert payment["status"] == "pending"
    [request] = fake.posts("collect")
    reference = payment["reference"]
    assert request.headers["x-reference-id"] == reference
    assert request.headers["x-target-environment"] == "sandbox"
    assert request.headers["x-callback-url"] == (
        f"{callbacks.base_url}/api/v1/operator-callbacks/{CONNECTOR}/{reference}"
    )
    assert request.body["amount"] == "1000" and request.body["currency"] == "EUR"
    assert request.body["payer"] == {"partyIdType": "MSISDN", "partyId": NUMBER}
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert (await read(client, merchant, f"payments/{reference}"))["status"] == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert await event_types(runtime, reference) == ["payment.succeeded"]


async def test_a_lost_callback_is_caught_by_the_status_schedule(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
) -> None:
    fake.callback_mode = "drop"
    payment = await live_payment(client, merchant)
    await run(runtime, worker, 29)
    assert (await read(client, merchant, f"payments/{payment['reference']}"))["status"] == (
        "pending"
    )
    await run(runtime, worker, 1)
    assert (await read(client, merchant, f"payments/{payment['reference']}"))["status"] == (
        "succeeded"
    )


async def test_a_duplicated_callback_applies_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
) -> None:
    fake.callback_mode = "duplicate"
    payment = await live_payment(client, merchant)
    await callbacks_received(runtime, count=2)
    await run(runtime, worker)
    await run(runtime, worker, 30)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert await event_types(runtime, payment["reference"]) == ["payment.succeeded"]


async def test_a_forged_success_callback_never_pays_what_mtn_failed(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
    callbacks: ServerThread,
) -> None:
    fake.callback_mode = "drop"  # the only notice is the forger's
    fake.outcome_for(NUMBER, "FAILED", "PAYER_NOT_FOUND")
    payment = await live_payment(client, merchant)
    reference = payment["reference"]
    url = f"{callbacks.base_url}/api/v1/operator-callbacks/{CONNECTOR}/{reference}"
    forged = {"externalId": reference, "status": "SUCCESSFUL", "financialTransactionId": "1"}
    assert fake.send_forged_callback(url, forged) == 200
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert (await read(client, merchant, f"payments/{reference}"))["status"] == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    assert await event_types(runtime, reference) == ["payment.failed"]


async def test_an_instalment_is_collected_through_mtn(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
) -> None:
    reference = await open_plan(client, merchant, 3000)
    await pay_instalment(client, merchant, reference, momo_body(phone_number=NUMBER, amount=3000))
    await callbacks_received(runtime)
    await run(runtime, worker)
    plan = await read(client, merchant, f"installment-plans/{reference}")
    assert plan["status"] == "succeeded" and plan["paid_amount"] == 3000
    assert await merchant_available(runtime, merchant.id, livemode=True) == 3000


async def test_a_payout_is_transferred_by_mtn(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "mtn"}
    payout = await send_payout(client, merchant, body)
    [transfer] = fake.received("transfer")
    assert transfer.body["payee"] == {"partyIdType": "MSISDN", "partyId": NUMBER}
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert (await read(client, merchant, f"payouts/{payout['reference']}"))["status"] == (
        "succeeded"
    )
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000


async def test_a_failed_transfer_of_another_amount_is_never_recredited(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
) -> None:
    """MTN's status answer names another amount than the transfer Cauri asked for: it is
    not about that request as recorded, so it settles nothing (a failure would give back
    money that may be gone) and a person is asked."""
    await top_up(runtime, merchant.id, 5000, livemode=True)
    fake.outcome_for(NUMBER, "FAILED", "PAYEE_NOT_FOUND")
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "mtn"}
    payout = await send_payout(client, merchant, body)
    [transfer] = fake.received("transfer")
    transfer.body["amount"] = "10"
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert (await read(client, merchant, f"payouts/{payout['reference']}"))["status"] == ("pending")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000
    sql = (
        "SELECT review_required_at IS NOT NULL AND reason = 'mismatch: amount 10 (asked: 1000)'"
        " FROM operator_operations WHERE subject_ref = :r"
    )
    assert await scalar(runtime, sql, r=payout["reference"])


async def test_a_refund_goes_back_through_mtns_refund_of_the_collection(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
) -> None:
    fake.callback_mode = "drop"
    payment = await live_payment(client, merchant)
    await run(runtime, worker, 30)
    await refund_payment(client, merchant, payment["reference"])
    [refund] = fake.received("refund")
    assert refund.body["referenceIdToRefund"] == payment["reference"]
    await run(runtime, worker, 30)
    assert (await read(client, merchant, f"payments/{payment['reference']}"))["status"] == (
        "refunded"
    )
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0


async def test_a_cancelled_plan_is_refunded_by_an_mtn_transfer(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
) -> None:
    fake.callback_mode = "drop"
    reference = await open_plan(client, merchant, 5000)
    await pay_instalment(client, merchant, reference, momo_body(phone_number=NUMBER, amount=2000))
    await run(runtime, worker, 30)
    await cancel_plan(client, merchant, reference)
    await run(runtime, worker)  # the refund job sends the transfer
    [transfer] = fake.received("transfer")
    assert transfer.body["amount"] == "2000"
    assert transfer.body["payee"]["partyId"] == NUMBER
    await run(runtime, worker, 30)
    assert (await read(client, merchant, f"installment-plans/{reference}"))["status"] == (
        "refunded"
    )
    # Staff find the plan's operations by the plan: its instalment's are the payment's.
    async with runtime.sessionmaker() as session:
        [operation] = await history.exchanges(session, reference)
    assert (operation.operation.action, operation.operation.status) == ("disburse", "succeeded")
    assert [e.action for e in operation.exchanges] == ["transfer", "transfer_status"]


@pytest.mark.parametrize(
    "fault", ["hang_after_accept", "reset_after_accept", "error_500_after_accept"]
)
async def test_a_transfer_accepted_then_unanswered_is_never_sent_twice_nor_recredited_early(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
    fault: str,
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    fake.hold = True
    fake.fault(fault, path="transfer")
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "mtn"}
    payout = await send_payout(client, merchant, body)
    assert payout["status"] == "pending"
    for delay in (30, 120, 600):
        await run(runtime, worker, delay)
        assert await merchant_available(runtime, merchant.id, livemode=True) == 4000
    assert len(fake.posts("transfer")) == 1
    [transfer] = fake.received("transfer")
    fake.settle(transfer.reference, "FAILED", "PAYEE_NOT_FOUND")
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert (await read(client, merchant, f"payouts/{payout['reference']}"))["status"] == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
    await run(runtime, worker, 3600)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
    assert len(fake.posts("transfer")) == 1


async def test_a_transfer_mtn_never_received_is_sent_again_under_the_same_reference(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: MtnMomoFake,
    merchant: MerchantKeys,
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    fake.callback_mode = "drop"
    fake.fault("error_500", path="transfer")  # refused before MTN recorded anything
    body = {"amount": 1000, "phone_number": NUMBER, "operator": "mtn"}
    payout = await send_payout(client, merchant, body)
    assert payout["status"] == "pending"
    assert fake.received("transfer") == []
    await run(runtime, worker, 30)  # 404: never received; sent again, accepted
    sent = [r.headers["x-reference-id"] for r in fake.posts("transfer")]
    assert len(sent) == 2 and sent[0] == sent[1]
    await run(runtime, worker, 120)
    assert (await read(client, merchant, f"payouts/{payout['reference']}"))["status"] == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000


async def test_mtn_refusing_the_credentials_fails_the_payment_with_nothing_taken(
    client: httpx.AsyncClient, runtime: Runtime, fake: MtnMomoFake, merchant: MerchantKeys
) -> None:
    fake.api_key = "rotated-by-mtn"
    response = await pay(client, merchant.headers(livemode=True), momo_body(phone_number=NUMBER))
    refused = assert_error(response, 402, "payment_failed")
    assert fake.received("collect") == []
    # The live path's refusal names the payment it recorded failed.
    failed = await read(client, merchant, f"payments/{refused['reference']}")
    assert failed["status"] == "failed"
