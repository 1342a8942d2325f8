"""Card payments left pending longer than CAURI_CARD_PAYMENT_TTL fail (DESIGN: Plans): the
customer never decided on the page. One job per card payment, due at created_at + TTL."""

from __future__ import annotations

import httpx
import pytest
from pydantic import ValidationError

from cauri.config import Settings
from cauri.kit.clock import ManualClock
from cauri.operators.protocol import Outcome
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payments.builders import PAYMENTS, FakeLiveOperator, events_of, merchant_available
from tests.plans.builders import (
    PLANS,
    available,
    create_plan,
    fetch,
    pay,
    platform,
    set_plan_settings,
)
from tests.support import MerchantKeys, card_body, make_merchant, scalar
from tests.web.builders import create_card_payment, ledger_transactions_of

DAY = 86_400


async def status_of(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str, livemode: bool = False
) -> str:
    response = await client.get(f"{PAYMENTS}/{reference}", headers=merchant.headers(livemode))
    assert response.status_code == 200, response.text
    status: str = response.json()["data"]["status"]
    return status


def test_the_ttl_is_a_day_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CAURI_CARD_PAYMENT_TTL", raising=False)
    assert Settings().card_payment_ttl == DAY
    monkeypatch.setenv("CAURI_CARD_PAYMENT_TTL", "600")
    assert Settings().card_payment_ttl == 600
    monkeypatch.setenv("CAURI_CARD_PAYMENT_TTL", "0")
    with pytest.raises(ValidationError):
        Settings()


async def test_a_card_payment_left_pending_fails_after_the_ttl(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    payment = await create_card_payment(client, merchant)
    reference = payment["reference"]
    clock.advance(DAY - 1)
    await worker.drain()
    assert await status_of(client, merchant, reference) == "pending"
    clock.advance(1)
    await worker.drain()
    assert await status_of(client, merchant, reference) == "failed"
    assert [kind for kind, _ in await events_of(runtime, reference)] == ["payment.failed"]
    assert await ledger_transactions_of(runtime, reference) == 0
    decision = await client.post(f"/pay/{reference}", data={"outcome": "succeeded"})
    assert decision.status_code == 409
    assert "Ce paiement est déjà refusé." in decision.text
    assert await scalar(runtime, "SELECT count(*) FROM jobs") == 0


async def test_the_ttl_comes_from_the_setting(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    runtime.settings.card_payment_ttl = 600
    merchant = await make_merchant(runtime)
    payment = await create_card_payment(client, merchant)
    clock.advance(599)
    await worker.drain()
    assert await status_of(client, merchant, payment["reference"]) == "pending"
    clock.advance(1)
    await worker.drain()
    assert await status_of(client, merchant, payment["reference"]) == "failed"


async def test_a_decided_card_payment_is_left_alone_by_its_ttl(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    payment = await create_card_payment(client, merchant)
    reference = payment["reference"]
    decision = await client.post(f"/pay/{reference}", data={"outcome": "succeeded"})
    assert decision.status_code == 303
    clock.advance(DAY)
    await worker.drain()
    assert await status_of(client, merchant, reference) == "succeeded"
    assert [kind for kind, _ in await events_of(runtime, reference)] == ["payment.succeeded"]
    assert await available(runtime, merchant.id) == 5_000


async def test_at_the_ttl_the_operator_is_asked_one_last_time(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    acquirer = FakeLiveOperator(outcome=Outcome.PENDING)
    runtime.operators.live_adapters["visa"] = acquirer
    merchant = await make_merchant(runtime)
    created = await client.post(PAYMENTS, json=card_body(), headers=merchant.headers(True))
    assert created.status_code == 201, created.text
    reference = created.json()["data"]["reference"]
    acquirer.outcome = Outcome.SUCCEEDED  # the customer paid; the notification was lost
    clock.advance(DAY)
    await worker.drain()
    assert await status_of(client, merchant, reference, livemode=True) == "succeeded"
    assert await merchant_available(runtime, merchant.id, livemode=True) == 5_000


async def test_a_card_instalment_left_pending_fails_and_the_plan_goes_on_without_it(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_creation_fee_fixed=300)
    plan = await create_plan(client, merchant, target_amount=10_000)
    reference = plan["reference"]
    card = await client.post(
        f"{PLANS}/{reference}/payments", json=card_body(amount=2_300), headers=merchant.headers()
    )
    card_reference = card.json()["data"]["reference"]
    assert (await pay(client, merchant, reference, amount=8_000)).status_code == 201
    clock.advance(DAY)
    await worker.drain()
    assert await status_of(client, merchant, card_reference) == "failed"
    assert [kind for kind, _ in await events_of(runtime, card_reference)] == ["payment.failed"]
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("pending", 8_000)
    # Its reservation is freed and the creation fee it carried falls to the next instalment.
    assert (await pay(client, merchant, reference, amount=2_300)).status_code == 201
    fetched = await fetch(client, merchant, reference)
    assert (fetched["status"], fetched["paid_amount"]) == ("succeeded", 10_000)
    assert await platform(runtime, "plan_fees") == 300
