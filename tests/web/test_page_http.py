"""The hosted page's HTTP contract, without a browser: HTML errors, the redirect, headers,
and simultaneous decisions on one payment."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.operators.simulator import Simulator
from cauri.runtime import Runtime
from cauri.web.rendering import format_amount
from cauri.worker.runner import Worker
from tests.plans.builders import (
    PLANS,
    assert_plan_reconciles,
    cancel,
    create_plan,
    expire,
    fetch,
)
from tests.support import MerchantKeys, card_body, make_merchant, momo_body
from tests.web.builders import create_card_payment, events_of, ledger_transactions_of


def assert_html(response: httpx.Response, status: int, text: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert text in response.text


@pytest.mark.parametrize("reference", ["not-a-uuid", "00000000-0000-4000-8000-000000000000", "%20"])
async def test_unknown_reference_is_an_html_404(client: httpx.AsyncClient, reference: str) -> None:
    page = await client.get(f"/pay/{reference}")
    assert_html(page, 404, "Ce lien de paiement ne correspond à aucun paiement.")
    decision = await client.post(f"/pay/{reference}", data={"outcome": "succeeded"})
    assert_html(decision, 404, "Paiement introuvable")


async def test_a_mobile_money_payment_has_no_page(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    created = await client.post(
        "/api/v1/payments", json=momo_body(phone_number="22997000002"), headers=merchant.headers()
    )
    reference = created.json()["data"]["reference"]
    assert_html(await client.get(f"/pay/{reference}"), 404, "Paiement introuvable")
    decision = await client.post(f"/pay/{reference}", data={"outcome": "succeeded"})
    assert_html(decision, 404, "Paiement introuvable")
    assert await events_of(runtime, reference) == []


async def test_an_invalid_outcome_is_an_html_422_and_decides_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await create_card_payment(client, merchant)
    for form in ({"outcome": "refunded"}, {}):
        response = await client.post(f"/pay/{payment['reference']}", data=form)
        assert_html(response, 422, "Demande invalide")
    assert await events_of(runtime, payment["reference"]) == []


async def test_the_page_cannot_be_framed_nor_cached(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await create_card_payment(client, merchant)
    for response in (
        await client.get(urlsplit(payment["payment_url"]).path),
        await client.get("/pay/unknown"),
    ):
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["cache-control"] == "no-store"


async def test_without_return_url_the_customer_comes_back_to_the_page(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await create_card_payment(client, merchant, return_url=None)
    path = f"/pay/{payment['reference']}"
    response = await client.post(path, data={"outcome": "succeeded"})
    assert response.status_code == 303
    assert response.headers["location"] == path
    assert_html(await client.get(path), 200, "Ce paiement est réussi.")


async def test_return_url_keeps_its_own_query(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    payment = await create_card_payment(
        client, merchant, return_url="https://shop.example/retour?panier=7&lang=fr"
    )
    response = await client.post(f"/pay/{payment['reference']}", data={"outcome": "failed"})
    assert response.status_code == 303
    target = urlsplit(response.headers["location"])
    assert (target.scheme, target.netloc, target.path) == ("https", "shop.example", "/retour")
    assert parse_qs(target.query) == {
        "panier": ["7"],
        "lang": ["fr"],
        "reference": [payment["reference"]],
        "status": ["failed"],
    }


async def test_simultaneous_decisions_settle_the_payment_once(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await create_card_payment(client, merchant)
    reference = payment["reference"]
    outcomes = ["succeeded", "failed"] * 10
    responses = await asyncio.gather(
        *(client.post(f"/pay/{reference}", data={"outcome": o}) for o in outcomes)
    )
    winners = [o for o, r in zip(outcomes, responses, strict=True) if r.status_code == 303]
    assert len(winners) == 1
    assert sorted(r.status_code for r in responses) == [303] + [409] * 19
    final = await client.get(f"/api/v1/payments/{reference}", headers=merchant.headers())
    assert final.json()["data"]["status"] == winners[0]
    assert await events_of(runtime, reference) == [f"payment.{winners[0]}"]
    expected_transactions = 1 if winners[0] == "succeeded" else 0
    assert await ledger_transactions_of(runtime, reference) == expected_transactions


@pytest.mark.parametrize(
    ("minor", "currency", "shown"),
    [
        (0, "XOF", "0\u00a0XOF"),
        (5075, "XOF", "5\u202f075\u00a0XOF"),
        (1234567, "XAF", "1\u202f234\u202f567\u00a0XAF"),
        (1250, "EUR", "12,50\u00a0EUR"),
        (100005, "USD", "1\u202f000,05\u00a0USD"),
    ],
)
def test_amounts_are_written_the_french_way(minor: int, currency: str, shown: str) -> None:
    assert format_amount(minor, currency) == shown


async def test_a_live_payment_offers_no_test_decision(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    # A live acquirer that leaves card payments pending (an operator's network: the one mock).
    runtime.operators.live_adapters["visa"] = Simulator(settle_delay=0)
    merchant = await make_merchant(runtime)
    created = await client.post(
        "/api/v1/payments", json=card_body(), headers=merchant.headers(livemode=True)
    )
    assert created.status_code == 201, created.text
    payment = created.json()["data"]
    path = urlsplit(payment["payment_url"]).path
    page = await client.get(path)
    assert_html(page, 200, "Le paiement par carte n&#39;est pas encore disponible")
    assert "<button" not in page.text and "Mode test" not in page.text
    decision = await client.post(path, data={"outcome": "succeeded"})
    assert_html(decision, 404, "Paiement introuvable")
    assert await events_of(runtime, payment["reference"]) == []


async def _cancelled(
    client: httpx.AsyncClient, merchant: MerchantKeys, clock: ManualClock, plan: str
) -> None:
    assert (await cancel(client, merchant, plan)).status_code == 200


async def _expiring(
    client: httpx.AsyncClient, merchant: MerchantKeys, clock: ManualClock, plan: str
) -> None:
    assert (await expire(client, merchant, plan)).status_code == 200


async def _past_expiry(
    client: httpx.AsyncClient, merchant: MerchantKeys, clock: ManualClock, plan: str
) -> None:
    clock.advance(days=60)  # no job has run the expiry yet: the page finds it due


Closing = Callable[[httpx.AsyncClient, MerchantKeys, ManualClock, str], Awaitable[None]]


@pytest.mark.parametrize("close", [_cancelled, _expiring, _past_expiry])
async def test_an_instalment_of_a_plan_no_longer_actively_pending_cannot_be_paid(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker, close: Closing
) -> None:
    merchant = await make_merchant(runtime)
    plan = (await create_plan(client, merchant))["reference"]
    created = await client.post(
        f"{PLANS}/{plan}/payments", json=card_body(amount=2_000), headers=merchant.headers()
    )
    assert created.status_code == 201, created.text
    payment = created.json()["data"]
    path = urlsplit(payment["payment_url"]).path
    await close(client, merchant, clock, plan)

    shown = await client.get(path)
    assert_html(shown, 409, "Ce versement ne peut plus être payé")
    assert "<button" not in shown.text
    assert await events_of(runtime, payment["reference"]) == []  # a page view changes nothing
    decision = await client.post(path, data={"outcome": "succeeded"})
    assert_html(decision, 409, "Ce versement ne peut plus être payé")

    fetched = await client.get(
        f"/api/v1/payments/{payment['reference']}", headers=merchant.headers()
    )
    assert fetched.json()["data"]["status"] == "failed"
    assert await events_of(runtime, payment["reference"]) == ["payment.failed"]
    assert await ledger_transactions_of(runtime, payment["reference"]) == 0
    assert_html(await client.get(path), 200, "Ce paiement est refusé.")
    await worker.drain()
    assert (await fetch(client, merchant, plan))["status"] == "refunded"
    await assert_plan_reconciles(runtime, plan)


async def test_an_instalment_of_an_open_plan_is_paid_on_the_page(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    plan = (await create_plan(client, merchant))["reference"]
    created = await client.post(
        f"{PLANS}/{plan}/payments", json=card_body(amount=2_000), headers=merchant.headers()
    )
    path = urlsplit(created.json()["data"]["payment_url"]).path
    assert_html(await client.get(path), 200, "Payer")
    assert (await client.post(path, data={"outcome": "succeeded"})).status_code == 303
    assert (await fetch(client, merchant, plan))["paid_amount"] == 2_000
    await assert_plan_reconciles(runtime, plan)
