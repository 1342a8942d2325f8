"""Live money through pawaPay, end to end over real HTTP: the API with a live key, the
worker, pawaPay's contract fake (its sandbox's test numbers, signed callbacks to the URLs of
its dashboard), and Cauri's callback route served for the fake to call back (issue 10). Each
test ends with the ledger reconciled (tests/conftest.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy import text

from cauri.calls import service as calls
from cauri.connectors import history
from cauri.connectors.service import connectors
from cauri.operators import catalogue
from cauri.operators.pawapay.providers import PROVIDERS
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.fakes.pawapay import KEY_ID, PawapayFake
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

CONNECTOR = "pawapay-sandbox"
TOKEN = "pawapay-sandbox-api-token"
# pawaPay's sandbox test numbers (MTN Benin, docs/research/pawapay.md).
COMPLETED = "22951345789"
PAYER_NOT_FOUND = "22951345029"
STAYS_IN_FLIGHT = "22951345129"
ORANGE_BF = "22605123456"  # ORANGE_BFA authorises with a pre-authorisation code (PREAUTH)
# Every operator the connector carries, with a number of its pawaPay provider.
CARRIED = {
    "mtn": "22997123456",
    "moov": "22995123456",
    "moov_bf": "22670123456",
    "orange_bf": ORANGE_BF,
    "mtn_ci": "2250512345678",
    "orange_ci": "2250712345678",
    "wave_ci": "2250112345678",
    "orange_sn": "221771234567",
    "free_sn": "221761234567",
    "wave_sn": "221701234567",
    "mtn_cg": "242061234567",
}


def pawapay_fake(callbacks: ServerThread, *, signed: bool = True) -> PawapayFake:
    url = f"{callbacks.base_url}/api/v1/operator-callbacks/{CONNECTOR}"
    return PawapayFake(
        api_token=TOKEN,
        signed_callbacks=signed,
        # As the staff set them in pawaPay's dashboard: the account's callback URL.
        callback_urls={"deposit": url, "payout": url, "refund": url},
    )


@pytest.fixture(params=["signed"])
def fake(request: pytest.FixtureRequest, callbacks: ServerThread) -> Iterator[PawapayFake]:
    with pawapay_fake(callbacks, signed=request.param == "signed") as fake:
        yield fake


@pytest.fixture
async def merchant(runtime: Runtime, fake: PawapayFake) -> MerchantKeys:
    await connect(
        runtime,
        name=CONNECTOR,
        kind="pawapay",
        base_url=fake.base_url,
        settings={"signed_callbacks": "true" if fake.signed_callbacks else "false"},
        secrets={"api_token": TOKEN},
        operators=CARRIED,
    )
    return await make_merchant(runtime)


async def live_payment(
    client: httpx.AsyncClient, merchant: MerchantKeys, number: str = COMPLETED, **body: Any
) -> dict[str, Any]:
    response = await pay(
        client, merchant.headers(livemode=True), momo_body(phone_number=number) | body
    )
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


@pytest.mark.parametrize("fake", ["signed", "unsigned"], indirect=True)
async def test_a_payment_is_a_pawapay_deposit_settled_once_its_callback_is_confirmed(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    payment = await live_payment(client, merchant)
    assert payment["status"] == "pending"
    reference = payment["reference"]
    [request] = fake.posts("deposit")
    assert request.body["depositId"] == reference
    assert request.body["amount"] == "1000" and request.body["currency"] == "XOF"
    assert request.body["payer"] == {
        "type": "MMO",
        "accountDetails": {"phoneNumber": COMPLETED, "provider": "MTN_MOMO_BEN"},
    }
    assert "preAuthorisationCode" not in request.body
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    await callbacks_received(runtime)
    # Signed or not, the callback is a hint: the status query it prompts settles it.
    assert await status_of(client, merchant, f"payments/{reference}") == "pending"
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert await event_types(runtime, reference) == ["payment.succeeded"]
    queries = [r for r in fake.requests if r.method == "GET" and reference in r.path]
    assert len(queries) == 1


def test_every_operator_pawapay_carries_is_exercised() -> None:
    assert set(CARRIED) == set(PROVIDERS)


@pytest.mark.parametrize("operator", sorted(CARRIED))
async def test_each_carried_operator_collects_refunds_and_pays_out(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
    operator: str,
) -> None:
    number = CARRIED[operator]
    mode = catalogue.find(operator)
    assert mode is not None
    extra: dict[str, Any] = {"operator": operator}
    if mode.requires_otp:
        extra["otp"] = "123456"
    if mode.requires_return_url:
        extra["return_url"] = "https://shop.example/back"
    payment = await live_payment(client, merchant, number, **extra)
    reference = payment["reference"]
    [deposit] = fake.posts("deposit")
    assert deposit.body["payer"]["accountDetails"]["provider"] == PROVIDERS[operator]
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    await refund_payment(client, merchant, reference)
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{reference}") == "refunded"
    currency = mode.currency
    await top_up(runtime, merchant.id, 5000, livemode=True, currency=currency)
    body = {"amount": 1000, "phone_number": number, "operator": operator}
    payout = await send_payout(client, merchant, body)
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payouts/{payout['reference']}") == "succeeded"
    available = await merchant_available(runtime, merchant.id, livemode=True, currency=currency)
    assert available == 4000


async def test_an_otp_payment_carries_its_code_as_the_pre_authorisation_code(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    payment = await live_payment(client, merchant, ORANGE_BF, operator="orange_bf", otp="483920")
    [request] = fake.posts("deposit")
    assert request.body["preAuthorisationCode"] == "483920"
    assert request.body["payer"]["accountDetails"]["provider"] == "ORANGE_BFA"
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "succeeded"


async def test_a_test_number_that_fails_fails_the_payment_with_pawapays_code(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    payment = await live_payment(client, merchant, PAYER_NOT_FOUND)
    await callbacks_received(runtime)
    await run(runtime, worker)
    reference = payment["reference"]
    assert await status_of(client, merchant, f"payments/{reference}") == "failed"
    assert await scalar_reason(runtime, reference) == "payer_not_found"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0


async def scalar_reason(runtime: Runtime, reference: str) -> str | None:
    from tests.support import scalar

    sql = "SELECT failure_reason FROM payments WHERE id = CAST(:r AS uuid)"
    reason: str | None = await scalar(runtime, sql, r=reference)
    return reason


async def test_a_number_pawapay_never_calls_back_for_stays_pending_and_is_asked_again(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    payment = await live_payment(client, merchant, STAYS_IN_FLIGHT)
    reference = payment["reference"]
    for delay in (30, 120, 600):
        await run(runtime, worker, delay)
        assert await status_of(client, merchant, f"payments/{reference}") == "pending"
    queries = [r for r in fake.requests if r.method == "GET" and r.path.endswith(reference)]
    assert len(queries) == 3
    assert len(fake.posts("deposit")) == 1


async def test_a_lost_callback_is_caught_by_the_status_schedule(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    fake.callback_mode = "drop"
    payment = await live_payment(client, merchant)
    await run(runtime, worker, 29)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "pending"
    await run(runtime, worker, 1)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "succeeded"


async def test_duplicated_and_reordered_callbacks_apply_once_each(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    fake.callback_mode = "duplicate"
    first = await live_payment(client, merchant)
    await callbacks_received(runtime, count=2)
    fake.callback_mode = "reorder"  # the next final state is held back until another's
    fake.outcome_for("22951345790", "FAILED", "PAYMENT_NOT_APPROVED")
    second = await live_payment(client, merchant, "22951345790")
    third = await live_payment(client, merchant, "22951345791", amount=500)
    await callbacks_received(runtime, count=4)
    await run(runtime, worker)
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{first['reference']}") == "succeeded"
    assert await status_of(client, merchant, f"payments/{second['reference']}") == "failed"
    assert await status_of(client, merchant, f"payments/{third['reference']}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1500
    assert await event_types(runtime, first["reference"]) == ["payment.succeeded"]
    assert await event_types(runtime, second["reference"]) == ["payment.failed"]


@pytest.mark.parametrize("forgery", ["signed_with_wrong_key", "unsigned", "tampered_body"])
async def test_a_forged_callback_never_pays_what_pawapay_failed(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
    callbacks: ServerThread,
    forgery: str,
) -> None:
    fake.callback_mode = "drop"  # the only notice is the forger's
    fake.hold = True
    payment = await live_payment(client, merchant)
    reference = payment["reference"]
    forged = {"depositId": reference, "status": "COMPLETED", "amount": "1000.00"}
    if forgery == "tampered_body":
        # pawaPay's own signature over one body, sent with another.
        url = fake.callback_urls["deposit"]
        signed = fake.signature_headers(url, b'{"depositId": "x", "status": "FAILED"}')
        async with httpx.AsyncClient() as forger:
            answer = (await forger.post(url, json=forged, headers=signed)).status_code
    else:
        answer = fake.send_forged_callback(
            "deposit",
            forged,
            signed_with_wrong_key=forgery == "signed_with_wrong_key",
            unsigned=forgery == "unsigned",
        )
    assert answer == 401
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "pending"
    fake.settle(reference, "FAILED", "PAYMENT_NOT_APPROVED")
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{reference}") == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    assert await event_types(runtime, reference) == ["payment.failed"]


async def test_a_redirect_provider_gives_the_payment_its_payment_url(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    """Wave through pawaPay: the customer approves on the provider's page."""
    fake.hold = True
    payment = await live_payment(client, merchant, "221771234567", operator="wave_sn")
    reference = payment["reference"]
    assert payment["status"] == "pending"
    assert payment["payment_url"] == f"{fake.base_url}/authorize/{reference}"
    fake.settle(reference)
    await callbacks_received(runtime, count=2)  # PROCESSING (with the URL), then COMPLETED
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"


async def test_an_instalment_is_collected_through_pawapay(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    reference = await open_plan(client, merchant, 3000)
    await pay_instalment(
        client, merchant, reference, momo_body(phone_number=COMPLETED, amount=3000)
    )
    await callbacks_received(runtime)
    await run(runtime, worker)
    plan = await read(client, merchant, f"installment-plans/{reference}")
    assert plan["status"] == "succeeded" and plan["paid_amount"] == 3000
    assert await merchant_available(runtime, merchant.id, livemode=True) == 3000


async def test_a_payout_is_a_pawapay_payout(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    body = {"amount": 1000, "phone_number": COMPLETED, "operator": "mtn", "reason": "Loyer"}
    payout = await send_payout(client, merchant, body)
    [request] = fake.posts("payout")
    assert request.body["payoutId"] in fake.payouts  # our reference is pawaPay's id
    assert request.body["recipient"]["accountDetails"] == {
        "phoneNumber": COMPLETED,
        "provider": "MTN_MOMO_BEN",
    }
    assert request.body["customerMessage"] == "Loyer"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payouts/{payout['reference']}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000


async def test_a_refund_is_pawapays_refund_of_the_deposit(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    payment = await live_payment(client, merchant)
    await callbacks_received(runtime)
    await run(runtime, worker)
    await refund_payment(client, merchant, payment["reference"])
    [request] = fake.posts("refund")
    assert request.body["depositId"] == payment["reference"]
    assert request.body["amount"] == "1000"
    await callbacks_received(runtime, count=2)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{payment['reference']}") == "refunded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0


async def test_a_cancelled_plan_is_refunded_by_a_pawapay_payout(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    fake.callback_mode = "drop"
    reference = await open_plan(client, merchant, 5000)
    await pay_instalment(
        client, merchant, reference, momo_body(phone_number=COMPLETED, amount=2000)
    )
    await run(runtime, worker, 30)
    await cancel_plan(client, merchant, reference)
    await run(runtime, worker)  # the refund job sends the payout
    [payout] = fake.posts("payout")
    assert payout.body["amount"] == "2000"
    assert payout.body["recipient"]["accountDetails"]["phoneNumber"] == COMPLETED
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"installment-plans/{reference}") == "refunded"


@pytest.mark.parametrize(
    "fault", ["hang_after_accept", "reset_after_accept", "error_500_after_accept"]
)
async def test_a_payout_accepted_then_unanswered_is_never_sent_twice_nor_recredited_early(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
    fault: str,
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    fake.hold = True
    fake.fault(fault, path="payouts")
    body = {"amount": 1000, "phone_number": COMPLETED, "operator": "mtn"}
    payout = await send_payout(client, merchant, body)
    assert payout["status"] == "pending"
    for delay in (30, 120, 600):
        await run(runtime, worker, delay)
        assert await merchant_available(runtime, merchant.id, livemode=True) == 4000
    assert len(fake.posts("payout")) == 1
    [sent] = fake.posts("payout")
    fake.settle(sent.body["payoutId"], "FAILED", "RECIPIENT_NOT_FOUND")
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payouts/{payout['reference']}") == "failed"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
    await run(runtime, worker, 3600)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5000
    assert len(fake.posts("payout")) == 1


async def test_a_payout_pawapay_never_received_is_sent_again_under_the_same_id(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    await top_up(runtime, merchant.id, 5000, livemode=True)
    fake.callback_mode = "drop"
    fake.fault("error_500", path="payouts")  # refused before pawaPay recorded anything
    body = {"amount": 1000, "phone_number": COMPLETED, "operator": "mtn"}
    payout = await send_payout(client, merchant, body)
    assert payout["status"] == "pending"
    assert fake.payouts == {}
    await run(runtime, worker, 30)  # NOT_FOUND: never received; sent again, accepted
    sent = [r.body["payoutId"] for r in fake.posts("payout")]
    assert len(sent) == 2 and sent[0] == sent[1]
    await run(runtime, worker, 120)
    assert await status_of(client, merchant, f"payouts/{payout['reference']}") == ("succeeded")
    assert await merchant_available(runtime, merchant.id, livemode=True) == 4000


async def test_pawapay_refusing_the_token_fails_the_payment_with_nothing_taken(
    client: httpx.AsyncClient, runtime: Runtime, fake: PawapayFake, merchant: MerchantKeys
) -> None:
    fake.api_token = "rotated-in-the-dashboard"
    response = await pay(client, merchant.headers(livemode=True), momo_body(phone_number=COMPLETED))
    assert_error(response, 402, "payment_failed")
    assert fake.deposits == {}


async def test_connectors_check_reads_the_active_configuration(
    runtime: Runtime, fake: PawapayFake, merchant: MerchantKeys
) -> None:
    async with runtime.sessionmaker() as session:
        report = await connectors.check(session, runtime.operators, CONNECTOR)
    assert report.ok, report.detail
    facts = dict(report.facts or {})
    assert facts["signed_callbacks"] == "yes"
    assert "MTN_MOMO_BEN" in facts["providers"]
    assert "DEPOSIT" in facts["providers"]["ORANGE_BFA"]
    assert "PREAUTH" in facts["providers"]["ORANGE_BFA"]
    assert "mtn" in facts["carried"] and "orange_bf" in facts["carried"]
    fake.signed_callbacks = False  # switched off in the dashboard, not in Cauri
    async with runtime.sessionmaker() as session:
        report = await connectors.check(session, runtime.operators, CONNECTOR)
    assert not report.ok and "signed_callbacks" in report.detail


async def test_a_callback_that_never_came_is_asked_for_again(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    """Reconciliation: pawaPay's resend-callback, for a pending payment whose final callback
    was lost; the callback it sends again settles the payment like the first would have."""
    fake.callback_mode = "drop"
    payment = await live_payment(client, merchant)
    reference = payment["reference"]
    fake.callback_mode = "send"
    async with runtime.sessionmaker() as session:
        [view] = await history.exchanges(session, reference)
    said = await calls.resend_notification(runtime, view.operation.id)
    assert said == "pawaPay sends its callback again"
    assert fake.resend_requests == [("deposit", reference)]
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    again = await calls.resend_notification(runtime, view.operation.id)
    assert again == "already succeeded: nothing to ask"


# Money safety (issue 23): what a callback is checked against, and what it may cost.


async def review_of(runtime: Runtime, reference: str) -> tuple[object, object, object]:
    """The operation's review flag and reason, and its recorded mismatch (both sides)."""
    sql = (
        "SELECT o.review_required_at IS NOT NULL, o.reason, "
        "(SELECT e.error FROM operator_exchanges e WHERE e.operation_id = o.id "
        "AND e.action = 'mismatch' LIMIT 1) "
        "FROM operator_operations o WHERE o.subject_ref = :r"
    )
    async with runtime.sessionmaker() as session:
        row = (await session.execute(text(sql), {"r": reference})).one()
    return row[0], row[1], row[2]


@pytest.mark.parametrize(
    ("what", "change", "found"),
    [
        ("amount", {"amount": "1"}, "amount 1 (asked: 1000)"),
        ("currency", {"currency": "XAF"}, "currency XAF (asked: XOF)"),
        ("a payout", {"kind": "payoutId"}, "kind disburse (asked: collect)"),
        ("a refund", {"kind": "refundId"}, "kind refund (asked: collect)"),
    ],
)
async def test_a_signed_callback_that_contradicts_the_deposit_settles_nothing_and_flags_it(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
    what: str,
    change: dict[str, str],
    found: str,
) -> None:
    """Signed by pawaPay's own key (a leak, a bug, another account's payment under the same
    id): it still says something the deposit was not, so nothing is paid."""
    fake.callback_mode = "drop"  # the only notice is this one
    fake.hold = True
    reference = (await live_payment(client, merchant))["reference"]
    body = {"status": "COMPLETED", "amount": "1000", "currency": "XOF"}
    body |= {k: v for k, v in change.items() if k != "kind"}
    body[change.get("kind", "depositId")] = reference
    assert fake.send_forged_callback("deposit", body) == 200
    await callbacks_received(runtime)
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "pending"
    flagged, reason, recorded = await review_of(runtime, reference)
    assert flagged and reason == f"mismatch: {found}" and recorded == found
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    # pawaPay's own status answer, which agrees with the request, settles it.
    fake.settle(reference, "COMPLETED")
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000


async def test_a_status_answer_with_another_amount_settles_nothing_and_flags_it(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    fake.callback_mode = "drop"
    reference = (await live_payment(client, merchant))["reference"]
    deposit = fake.payment(reference)
    assert deposit is not None
    deposit.amount = Decimal(10)  # what pawaPay's answer says it took
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{reference}") == "pending"
    flagged, reason, recorded = await review_of(runtime, reference)
    assert flagged and reason == "mismatch: amount 10.00 (asked: 1000)"
    assert recorded == "amount 10.00 (asked: 1000)"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 0
    assert await event_types(runtime, reference) == []


def forged_headers(fake: PawapayFake, url: str, raw: bytes) -> dict[str, str]:
    """Signed with a key of the forger's, under a key id pawaPay never published."""
    headers = fake.signature_headers(url, raw, key=ec.generate_private_key(ec.SECP256R1()))
    headers["Signature-Input"] = headers["Signature-Input"].replace(KEY_ID, "forged-key")
    return headers


async def test_forged_callbacks_at_once_hold_no_connection_and_fetch_the_keys_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    """30 at once (the shared test server has few connections to spare), naming a key id
    pawaPay does not have, while pawaPay's keys take 2 s to come: none holds a transaction
    meanwhile (none idle in one for a second: a busy event loop leaves some idle for a
    moment), pawaPay is asked for its keys once, and what each leaves on record is bounded."""
    fake.callback_mode = "drop"
    fake.hold = True
    fake.public_key_delay = 2.0
    reference = (await live_payment(client, merchant))["reference"]
    url = fake.callback_urls["deposit"]
    raw = json.dumps(
        {"depositId": reference, "status": "COMPLETED", "padding": "x" * 15_000}
    ).encode()
    done = asyncio.Event()
    idle_in_transaction = 0

    async def watch() -> None:
        nonlocal idle_in_transaction
        sql = (
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND state = 'idle in transaction' AND state_change < now() - interval '1 s'"
        )
        while not done.is_set():
            idle_in_transaction = max(idle_in_transaction, int(await scalar(runtime, sql)))
            await asyncio.sleep(0.05)

    async with asyncio.TaskGroup() as group, httpx.AsyncClient(timeout=60) as forger:
        watching = group.create_task(watch())
        answers = await asyncio.gather(
            *(
                forger.post(url, content=raw, headers=forged_headers(fake, url, raw))
                for _ in range(30)
            )
        )
        done.set()
        await watching
    assert [answer.status_code for answer in answers] == [401] * 30
    assert idle_in_transaction == 0
    assert len([r for r in fake.requests if r.path == "/v2/public-key/http"]) == 1
    kept = "SELECT max(length(request_body)) FROM operator_exchanges WHERE action = 'callback'"
    assert await scalar(runtime, kept) == calls.REFUSED_KEPT
    await run(runtime, worker)
    assert await status_of(client, merchant, f"payments/{reference}") == "pending"


@pytest.mark.parametrize("fake", ["unsigned"], indirect=True)
async def test_many_hints_about_one_deposit_queue_one_status_query(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    fake: PawapayFake,
    merchant: MerchantKeys,
) -> None:
    fake.callback_mode = "drop"
    fake.hold = True
    reference = (await live_payment(client, merchant))["reference"]
    url = fake.callback_urls["deposit"]
    raw = json.dumps({"depositId": reference, "status": "COMPLETED"}).encode()
    async with httpx.AsyncClient(timeout=60) as hinter:
        answers = await asyncio.gather(*(hinter.post(url, content=raw) for _ in range(20)))
    assert [answer.status_code for answer in answers] == [200] * 20
    queued = (
        "SELECT count(*) FROM jobs WHERE kind = 'calls.poll' AND status = 'queued' "
        "AND payload->>'scheduled' = 'false'"
    )
    assert await scalar(runtime, queued) == 1
    await callbacks_received(runtime, count=20)
    await run(runtime, worker)
    queries = [r for r in fake.requests if r.method == "GET" and r.path.endswith(reference)]
    assert len(queries) == 1
    assert await status_of(client, merchant, f"payments/{reference}") == "pending"
