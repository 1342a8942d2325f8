"""Paying a checkout session (issue 25): each payment tried from its page is an attempt; the
first success completes the session, once; a later success is refunded in full; at most five
attempts; the expiry. Driven over HTTP as the page's form posts, in test mode."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.checkout.builders import event_types, fetch, open_session, page_path, submit
from tests.support import MerchantKeys, assert_error, make_merchant, scalar

PENDING = "22997000002"  # the simulator leaves it pending (a test helper decides)
AT_ONCE = "22997000000"  # succeeded at once
REFUSED = "22997000001"  # refused at initiation


def attempt_of(response: httpx.Response) -> str:
    """The payment reference the form's answer sends the customer to."""
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    assert "/attempts/" in location, location
    return location.rsplit("/", 1)[1]


async def decide(
    client: httpx.AsyncClient, merchant: MerchantKeys, payment: str, outcome: str
) -> httpx.Response:
    return await client.post(
        f"/api/v1/test-helpers/payments/{payment}/{outcome}", headers=merchant.headers()
    )


async def payment(client: httpx.AsyncClient, merchant: MerchantKeys, ref: str) -> dict[str, Any]:
    response = await client.get(f"/api/v1/payments/{ref}", headers=merchant.headers())
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()["data"]
    return found


async def test_the_first_success_completes_the_session(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, callback_url="https://b.example/hook")
    paid = attempt_of(await submit(client, checkout, "mtn", phone_number=AT_ONCE))
    found = await fetch(client, merchant, checkout["reference"])
    assert found["status"] == "complete"
    assert (found["payment"], found["attempts"]) == (paid, [paid])
    assert found["completed_at"] is not None
    made = await payment(client, merchant, paid)
    assert (made["status"], made["amount"], made["checkout_session"]) == (
        "succeeded",
        5000,
        checkout["reference"],
    )
    assert made["description"] == "Commande 1042"
    assert await event_types(runtime, checkout["reference"]) == ["checkout_session.completed"]
    completed = await scalar(
        runtime,
        "SELECT callback_url FROM events WHERE type = 'checkout_session.completed'",
    )
    assert completed == "https://b.example/hook"
    page = await client.get(page_path(checkout))
    assert page.status_code == 200 and "Cette commande est payée." in page.text
    receipt = await client.get(f"{page_path(checkout)}/attempts/{paid}")
    back = f"{checkout['return_url']}?checkout_session={checkout['reference']}"
    assert f'<meta http-equiv="refresh" content="8;url={back}">' in receipt.text


async def test_a_failure_then_another_mode_completes_it(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    refused = attempt_of(await submit(client, checkout, "mtn", phone_number=REFUSED))
    clock.advance(30)  # attempts are listed by when they were made
    failed_page = await client.get(f"{page_path(checkout)}/attempts/{refused}")
    assert "Réessayer" in failed_page.text
    assert (await fetch(client, merchant, checkout["reference"]))["status"] == "open"
    paid = attempt_of(await submit(client, checkout, "moov", phone_number="97000000"))
    found = await fetch(client, merchant, checkout["reference"])
    assert (found["status"], found["payment"], found["attempts"]) == (
        "complete",
        paid,
        [refused, paid],
    )
    assert (await payment(client, merchant, paid))["customer"]["phone_number"] == "22997000000"


async def test_a_pending_attempt_may_be_left_for_another(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    """ "Essayer autrement": the first attempt still waits when the second succeeds; when the
    first succeeds later, it is refunded in full."""
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    waiting = attempt_of(await submit(client, checkout, "mtn", phone_number=PENDING))
    waiting_page = await client.get(f"{page_path(checkout)}/attempts/{waiting}")
    assert '<meta http-equiv="refresh" content="3">' in waiting_page.text
    assert "Essayer autrement" in waiting_page.text
    assert "2299700****" in waiting_page.text and PENDING not in waiting_page.text
    paid = attempt_of(await submit(client, checkout, "mtn", phone_number=AT_ONCE))
    late = await decide(client, merchant, waiting, "succeed")
    assert late.status_code == 200, late.text
    await worker.drain()
    found = await fetch(client, merchant, checkout["reference"])
    assert (found["status"], found["payment"]) == ("complete", paid)
    refunds = await client.get(
        "/api/v1/refunds", params={"payment": waiting}, headers=merchant.headers()
    )
    (refund,) = refunds.json()["data"]
    assert refund["external_id"] == f"{checkout['reference']}:{waiting}"
    assert refund["amount"] == 5000
    assert await event_types(runtime, checkout["reference"]) == ["checkout_session.completed"]


async def test_two_attempts_succeeding_at_once_complete_it_once(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    attempts = [
        attempt_of(await submit(client, checkout, "mtn", phone_number=PENDING)) for _ in range(4)
    ]
    answers = await asyncio.gather(*(decide(client, merchant, a, "succeed") for a in attempts))
    assert [answer.status_code for answer in answers] == [200] * 4
    await worker.drain()
    found = await fetch(client, merchant, checkout["reference"])
    assert found["status"] == "complete" and found["payment"] in attempts
    assert await event_types(runtime, checkout["reference"]) == ["checkout_session.completed"]
    refunded = await scalar(runtime, "SELECT array_agg(CAST(payment_id AS text)) FROM refunds")
    assert sorted(refunded) == sorted(a for a in attempts if a != found["payment"])


async def test_five_attempts_at_most(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    for _ in range(5):
        attempt_of(await submit(client, checkout, "mtn", phone_number=REFUSED))
    sixth = await submit(client, checkout, "mtn", phone_number=AT_ONCE)
    assert sixth.status_code == 409
    assert "Contactez le marchand" in sixth.text
    assert len((await fetch(client, merchant, checkout["reference"]))["attempts"]) == 5


async def test_an_expired_session_takes_no_attempt(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, expires_in=300)
    clock.advance(300)
    page = await client.get(page_path(checkout))
    assert page.status_code == 410 and "a expiré" in page.text
    await worker.drain()
    found = await fetch(client, merchant, checkout["reference"])
    assert found["status"] == "expired"
    assert await event_types(runtime, checkout["reference"]) == ["checkout_session.expired"]
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0


async def test_a_session_expired_by_the_merchant_refunds_a_late_success(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    waiting = attempt_of(await submit(client, checkout, "mtn", phone_number=PENDING))
    expire = f"/api/v1/checkout-sessions/{checkout['reference']}/expire"
    assert (await client.post(expire, headers=merchant.headers())).status_code == 200
    assert (await decide(client, merchant, waiting, "succeed")).status_code == 200
    await worker.drain()
    found = await fetch(client, merchant, checkout["reference"])
    assert (found["status"], found["payment"]) == ("expired", None)
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 1
    shown = await client.get(f"{page_path(checkout)}/attempts/{waiting}")
    assert "remboursé" in shown.text


async def test_a_complete_session_cannot_expire(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    attempt_of(await submit(client, checkout, "mtn", phone_number=AT_ONCE))
    expire = f"/api/v1/checkout-sessions/{checkout['reference']}/expire"
    assert_error(await client.post(expire, headers=merchant.headers()), 409, "conflict")


async def test_a_card_is_paid_on_its_page_and_comes_back(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    sent = await submit(
        client, checkout, "VISA", firstname="Awa", lastname="Diallo", email="awa@example.com"
    )
    assert sent.status_code == 303, sent.text
    card_page = httpx.URL(sent.headers["location"])
    assert card_page.path.startswith("/pay/")
    decided = await client.post(card_page.path, data={"outcome": "succeeded"})
    assert decided.status_code == 303
    back = httpx.URL(decided.headers["location"])
    assert back.path == f"{page_path(checkout)}/return"
    shown = await client.get(back.path, params=dict(back.params))
    assert shown.status_code == 303 and "/attempts/" in shown.headers["location"]
    found = await fetch(client, merchant, checkout["reference"])
    assert found["status"] == "complete"
    made = await payment(client, merchant, found["payment"])
    assert made["customer"]["email"] == "awa@example.com"


async def test_in_test_mode_an_operator_s_own_page_is_played_by_cauri_s(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Wave and Orange Money take the customer to a page of their own live; in test mode
    Cauri's test page plays it (the tester decides), then the customer comes back."""
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, country="SN")
    sent = await submit(client, checkout, "wave_sn", phone_number="771234567")
    assert sent.status_code == 303, sent.text
    test_page = httpx.URL(sent.headers["location"])
    assert test_page.path.startswith("/pay/")
    shown = await client.get(test_page.path)
    assert "cette page joue celle de Wave Sénégal" in shown.text
    refused = await client.post(test_page.path, data={"outcome": "failed"})
    back = httpx.URL(refused.headers["location"])
    assert back.path == f"{page_path(checkout)}/return"
    attempt = await client.get((await client.get(back.path)).headers["location"])
    assert "Réessayer" in attempt.text
    again = await submit(client, checkout, "orange_ci", phone_number="2250700000000")
    decided = await client.post(
        httpx.URL(again.headers["location"]).path, data={"outcome": "succeeded"}
    )
    assert decided.status_code == 303
    found = await fetch(client, merchant, checkout["reference"])
    assert found["status"] == "complete" and len(found["attempts"]) == 2
    made = await payment(client, merchant, found["payment"])
    assert (made["payment_mode"]["operator"], made["status"]) == ("orange_ci", "succeeded")
