"""The client package (`clients/python`) against a running Cauri over real HTTP: each
resource read and written, errors as classes, replays, pages, webhooks."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import httpx
import pytest

from cauri.webhooks import delivery
from cauri.webhooks.signature import signature_header
from cauri_client import (
    AsyncCauri,
    Balance,
    Cauri,
    ConnectionFailed,
    Event,
    InvalidRequest,
    NotFound,
    Payment,
    PaymentFailed,
    PayoutFailed,
    Unauthorized,
    testing,
)
from cauri_client.webhooks import InvalidSignature, verify
from tests.client.conftest import no_sleep
from tests.support import MerchantKeys, ServerThread
from tests.webhooks.receiver import Receiver

PAID = testing.number(testing.SUCCEEDS)


def test_a_payment_is_created_and_read_back_by_reference_and_external_id(cauri: Cauri) -> None:
    payment = cauri.payments.create(
        amount=5000, operator="mtn", phone_number=PAID, external_id="order-42"
    )
    assert isinstance(payment, Payment)
    assert (payment.status, payment.amount, payment.external_id) == ("succeeded", 5000, "order-42")
    assert payment.payment_mode.operator == "mtn" and payment.livemode is False
    assert isinstance(payment.created_at, datetime) and payment.created_at.tzinfo
    assert cauri.payments.get(payment.reference) == payment
    assert cauri.payments.get("order-42") == payment


async def test_the_async_client_creates_reads_and_lists(async_cauri: AsyncCauri) -> None:
    created = await async_cauri.payments.create(
        amount=1500, operator="mtn", phone_number=PAID, external_id="async-1"
    )
    assert await async_cauri.payments.get("async-1") == created
    listed = [payment async for payment in async_cauri.payments.list()]
    assert listed == [created]


def test_a_replay_with_the_same_external_id_returns_the_first_payment(cauri: Cauri) -> None:
    first = cauri.payments.create(amount=2000, operator="mtn", phone_number=PAID, external_id="x1")
    again = cauri.payments.create(amount=2000, operator="mtn", phone_number=PAID, external_id="x1")
    assert again.reference == first.reference
    assert [p.reference for p in cauri.payments.list()] == [first.reference]


class LosesTheFirstAnswer(httpx.HTTPTransport):
    """The network as it fails at the worst moment: the first request reaches the server
    and is carried out, and its answer never comes back."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        response = super().handle_request(request)
        if self.sent == 1:
            response.read()
            raise httpx.ReadTimeout("answer lost", request=request)
        return response


def test_a_lost_answer_is_retried_only_for_a_creation_with_an_external_id(
    server: ServerThread, cauri: Cauri, merchant: MerchantKeys
) -> None:
    key, url = merchant.test_key, server.base_url
    with Cauri(key, base_url=url, sleep=no_sleep, transport=LosesTheFirstAnswer()) as flaky:
        payment = flaky.payments.create(
            amount=3000, operator="mtn", phone_number=PAID, external_id="lost-1"
        )
    assert payment.external_id == "lost-1"
    assert [p.reference for p in cauri.payments.list()] == [payment.reference]

    unkeyed = LosesTheFirstAnswer()
    with (
        Cauri(key, base_url=url, sleep=no_sleep, transport=unkeyed) as flaky,
        pytest.raises(ConnectionFailed) as lost,
    ):
        flaky.payments.create(amount=3000, operator="mtn", phone_number=PAID)
    assert lost.value.sent and lost.value.code == "timeout"
    assert unkeyed.sent == 1  # not sent again: it was made, and a replay would make another
    assert len(list(cauri.payments.list())) == 2


def test_refusals_raise_the_class_of_their_code(cauri: Cauri, server: ServerThread) -> None:
    with pytest.raises(InvalidRequest) as invalid:
        cauri.payments.create(amount=5000, operator="VISA", return_url="https://shop.example/r")
    assert invalid.value.http_status == 422 and invalid.value.details
    assert any(field.startswith("customer") for field in invalid.value.details)
    assert invalid.value.request_id

    with pytest.raises(NotFound) as missing:
        cauri.payments.get("no-such-payment")
    assert (missing.value.code, missing.value.http_status) == ("not_found", 404)

    with pytest.raises(PaymentFailed) as refused:
        cauri.payments.create(
            amount=5000, operator="mtn", phone_number=testing.number(testing.REFUSED)
        )
    assert refused.value.reference is not None
    assert cauri.payments.get(refused.value.reference).status == "failed"

    with (
        Cauri("sk_test_not-a-key", base_url=server.base_url) as stranger,
        pytest.raises(Unauthorized) as refused_key,
    ):
        stranger.balance.get()
    assert refused_key.value.http_status == 401


def test_a_list_walks_every_page(cauri: Cauri) -> None:
    made = [
        cauri.payments.create(amount=1000 + n, operator="mtn", phone_number=PAID).reference
        for n in range(7)
    ]
    walked = [payment.reference for payment in cauri.payments.list(per_page=3)]
    assert walked == made[::-1]  # newest first, over three pages
    assert [p.reference for p in cauri.payments.list(per_page=3, start=3)] == [made[0]]
    assert [p.amount for p in cauri.payments.list(operator="mtn", per_page=100)][-1] == 1000
    # A period, sent as the API's `from` and `to` (dates include their day; the payments' own
    # days, should midnight pass between them).
    first, last = (cauri.payments.get(made[i]).created_at.date() for i in (0, -1))
    assert len(list(cauri.payments.list(from_=first, to=last, per_page=100))) == 7
    assert list(cauri.payments.list(to=first - timedelta(days=1))) == []


def test_refund_payout_balance_and_catalogue(cauri: Cauri) -> None:
    payment = cauri.payments.create(amount=20_000, operator="mtn", phone_number=PAID)
    refund = cauri.refunds.create(payment.reference, amount=2000, reason="Article manquant")
    assert (refund.payment, refund.amount, refund.status) == (payment.reference, 2000, "succeeded")
    assert cauri.refunds.get(refund.reference) == refund
    assert [r.reference for r in cauri.refunds.list(payment=payment.reference)] == [
        refund.reference
    ]

    [before] = cauri.balance.get()
    assert isinstance(before, Balance) and before.currency == "XOF"
    payout = cauri.payouts.create(
        amount=1000, phone_number=PAID, operator="mtn", external_id="payout-1"
    )
    assert payout.reference.startswith("pyo_") and payout.status == "succeeded"
    assert payout.phone_number != PAID  # masked
    [after] = cauri.balance.get()
    assert after.available == before.available - payout.total_debited
    with pytest.raises(PayoutFailed):
        cauri.payouts.create(
            amount=1000, phone_number=testing.number(testing.REFUSED), operator="mtn"
        )
    assert [p.reference for p in cauri.payouts.list(status="succeeded")] == [payout.reference]
    kinds = [line.type for line in cauri.balance.transactions()]
    assert kinds[0] in {"payout", "payout_reversal"} and "payment" in kinds and "refund" in kinds

    modes = cauri.payment_modes.list(country="BJ")
    mtn = next(mode for mode in modes if mode.operator == "mtn")
    assert mtn.country_code == "BJ" and mtn.requires_otp is False
    assert mtn.fees.percent >= 0 and mtn.availability.collection


def test_events_are_listed_and_their_data_read_as_the_resource(cauri: Cauri) -> None:
    payment = cauri.payments.create(amount=5000, operator="mtn", phone_number=PAID)
    [event] = cauri.events.list(type="payment.succeeded")
    assert isinstance(event, Event) and event.event == "payment.succeeded"
    assert isinstance(event.object, Payment) and event.object.reference == payment.reference
    assert cauri.events.get(event.id) == event


async def test_a_delivered_notification_verifies_with_the_client(cauri: Cauri) -> None:
    with Receiver() as receiver:
        endpoint = cauri.webhooks.set_endpoint(receiver.url)
        assert cauri.webhooks.get_endpoint() == endpoint and endpoint.url == receiver.url
        payment = cauri.payments.create(amount=5000, operator="mtn", phone_number=PAID)
        [request] = await receiver.wait_for(1)
    event = verify(request.body, request.headers["x-service-signature"], endpoint.secret)
    assert event.event == "payment.succeeded" and event.id == request.headers["x-service-delivery"]
    assert isinstance(event.object, Payment) and event.object.reference == payment.reference
    assert event == cauri.events.get(event.id)
    with pytest.raises(InvalidSignature):
        verify(request.body + b" ", request.headers["x-service-signature"], endpoint.secret)
    [logged] = cauri.webhooks.deliveries()
    assert logged.id == event.id and logged.attempts >= 1


def test_an_event_of_an_unknown_type_and_unknown_fields_are_kept() -> None:
    """The spec adds event types and fields: a receiver keeps what it does not know."""
    body = delivery.serialize(
        {
            "id": "0b5f0c2e-0000-4000-8000-000000000000",
            "event": "dispute.opened",
            "livemode": False,
            "created_at": "2026-01-31T12:00:00+00:00",
            "data": {"reference": "dsp_1"},
            "api_version": "2026-02",
        }
    )
    now = int(time.time())
    event = verify(body, signature_header(body, "whsec_s", now), "whsec_s")
    assert (event.event, event.object, event.data) == (
        "dispute.opened",
        None,
        {"reference": "dsp_1"},
    )
    assert event.extra == {"api_version": "2026-02"}


async def test_the_catalogue_and_the_balance_through_the_async_client(
    async_cauri: AsyncCauri,
) -> None:
    modes = await async_cauri.payment_modes.list(type="card")
    assert {mode.operator for mode in modes} >= {"VISA", "MASTERCARD"}
    assert all(balance.available == 0 for balance in await async_cauri.balance.get())


def test_a_payout_batch_is_sent_read_and_listed(cauri: Cauri) -> None:
    cauri.payments.create(amount=20_000, operator="mtn", phone_number=PAID)
    item = {"amount": 1000, "phone_number": PAID, "operator": "mtn"}
    batch = cauri.payout_batches.create(
        external_id="batch-1",
        items=[item | {"external_id": "a"}, item | {"external_id": "b", "amount": -5}],
    )
    assert batch.reference.startswith("pyb_") and batch.counts.total == 2
    assert batch.items is not None and batch.items[1].error is not None
    assert batch.items[1].error["code"] == "invalid_request"
    replayed = cauri.payout_batches.create(external_id="batch-1", items=[item])
    assert replayed.reference == batch.reference
    # Paid by the server's worker, after the answer: read until it says so.
    deadline = time.monotonic() + 60
    while (read := cauri.payout_batches.get(batch.reference)).status != "completed":
        assert time.monotonic() < deadline, read
        time.sleep(0.1)
    assert (read.counts.succeeded, read.counts.refused) == (1, 1)
    assert read.items is not None and read.items[0].payout is not None
    assert cauri.payouts.get(read.items[0].payout).status == "succeeded"
    assert [b.reference for b in cauri.payout_batches.list()] == [batch.reference]
