"""The checkout session API (issue 25): its object, idempotency, isolation between merchants
and environments, listing, expiry by the merchant, and bad input (422, nothing written)."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from tests.checkout.builders import RETURN_URL, event_types, fetch, open_session, session_body
from tests.support import assert_error, make_merchant, scalar

SESSIONS = "/api/v1/checkout-sessions"


async def test_a_session_is_opened_with_its_page(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(
        client,
        merchant,
        external_id="commande-1042",
        customer={"firstname": "Awa", "phone_number": "22997000000"},
        country="bj",
        operators=["MTN", "moov"],
        metadata={"order": 1042},
    )
    reference = checkout["reference"]
    assert reference.startswith("cs_") and len(reference) >= 3 + 32  # 128 random bits in hex
    assert checkout["url"] == f"http://127.0.0.1/checkout/{reference}"
    assert checkout["status"] == "open"
    assert (checkout["amount"], checkout["currency"]) == (5000, "XOF")
    assert checkout["external_id"] == "commande-1042"
    assert checkout["livemode"] is False
    expires_at = datetime.fromisoformat(checkout["expires_at"])
    assert expires_at == clock.now() + timedelta(seconds=86_400)
    assert (checkout["payment"], checkout["attempts"], checkout["completed_at"]) == (None, [], None)
    assert checkout["return_url"] == RETURN_URL
    assert checkout["country"] == "BJ"
    assert checkout["operators"] == ["mtn", "moov"]
    assert checkout["customer"] == {
        "firstname": "Awa",
        "lastname": None,
        "email": None,
        "phone_number": "22997000000",
    }
    assert checkout["metadata"] == {"order": 1042}
    assert await fetch(client, merchant, reference) == checkout
    assert await fetch(client, merchant, "commande-1042") == checkout


async def test_expires_in_sets_the_expiry(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, expires_in=300)
    assert datetime.fromisoformat(checkout["expires_at"]) == clock.now() + timedelta(seconds=300)


async def test_an_external_id_opens_one_session_per_environment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    first = await open_session(client, merchant, external_id="cmd-7")
    again = await client.post(
        SESSIONS, json=session_body(external_id="cmd-7", amount=9999), headers=merchant.headers()
    )
    assert again.status_code == 200, again.text
    assert again.json()["data"] == first
    live = await open_session(
        client, merchant, livemode=True, external_id="cmd-7", return_url="https://b.example/ok"
    )
    assert live["reference"] != first["reference"] and live["livemode"] is True
    assert await scalar(runtime, "SELECT count(*) FROM checkout_sessions") == 2


async def test_a_session_is_seen_only_by_its_merchant_in_its_environment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    checkout = await open_session(client, merchant, external_id="cmd-1")
    for headers in (other.headers(), merchant.headers(livemode=True)):
        for reference in (checkout["reference"], "cmd-1"):
            found = await client.get(f"{SESSIONS}/{reference}", headers=headers)
            assert_error(found, 404, "not_found")
        expired = await client.post(f"{SESSIONS}/{checkout['reference']}/expire", headers=headers)
        assert_error(expired, 404, "not_found")
        listed = await client.get(SESSIONS, headers=headers)
        assert listed.json()["data"] == []
    assert (await fetch(client, merchant, checkout["reference"]))["status"] == "open"


async def test_sessions_are_listed_newest_first_and_filtered(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    older = await open_session(client, merchant)
    clock.advance(60)
    newer = await open_session(client, merchant)
    await client.post(f"{SESSIONS}/{older['reference']}/expire", headers=merchant.headers())
    listed = (await client.get(SESSIONS, headers=merchant.headers())).json()
    assert [s["reference"] for s in listed["data"]] == [newer["reference"], older["reference"]]
    assert listed["meta"]["total"] == 2
    expired = await client.get(SESSIONS, params={"status": "expired"}, headers=merchant.headers())
    assert [s["reference"] for s in expired.json()["data"]] == [older["reference"]]
    bad = await client.get(SESSIONS, params={"status": "paid"}, headers=merchant.headers())
    assert_error(bad, 422, "invalid_request")


async def test_the_merchant_expires_an_open_session_once(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant)
    path = f"{SESSIONS}/{checkout['reference']}/expire"
    expired = await client.post(path, headers=merchant.headers())
    assert expired.status_code == 200, expired.text
    assert expired.json()["data"]["status"] == "expired"
    again = await client.post(path, headers=merchant.headers())
    assert again.status_code == 200 and again.json()["data"]["status"] == "expired"
    assert await event_types(runtime, checkout["reference"]) == ["checkout_session.expired"]


BAD_BODIES = [
    ({"amount": 5000}, "return_url"),
    (session_body(amount=0), "amount"),
    (session_body(amount="5000"), "amount"),
    (session_body(amount=10.5), "amount"),
    (session_body(currency="GBP"), "currency"),
    (session_body(return_url="boutique.example"), "return_url"),
    (session_body(callback_url="ftp://x.example"), "callback_url"),
    (session_body(description="x" * 256), "description"),
    (session_body(expires_in=299), "expires_in"),
    (session_body(expires_in=604_801), "expires_in"),
    (session_body(country="FR"), "country"),
    (session_body(operators=[]), "operators"),
    (session_body(operators=["paypal"]), "operators"),
    (session_body(customer={"email": "pas-un-email"}), "customer.email"),
    (session_body(metadata="x"), "metadata"),
    (session_body(colour="bleu"), "colour"),
]


@pytest.mark.parametrize(("body", "field"), BAD_BODIES)
async def test_bad_input_is_a_422_naming_the_field_and_writes_nothing(
    client: httpx.AsyncClient, runtime: Runtime, body: dict[str, object], field: str
) -> None:
    merchant = await make_merchant(runtime)
    error = assert_error(
        await client.post(SESSIONS, json=body, headers=merchant.headers()), 422, "invalid_request"
    )
    assert field in error["details"], error
    assert await scalar(runtime, "SELECT count(*) FROM checkout_sessions") == 0
    assert await scalar(runtime, "SELECT count(*) FROM jobs") == 0


async def test_a_live_session_returns_over_https_only(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.post(
        SESSIONS,
        json=session_body(return_url="http://boutique.example/merci"),
        headers=merchant.headers(livemode=True),
    )
    assert "return_url" in assert_error(response, 422, "invalid_request")["details"]


async def test_without_a_key_nothing_is_answered(client: httpx.AsyncClient) -> None:
    assert_error(await client.post(SESSIONS, json=session_body()), 401, "unauthorized")
    assert_error(await client.get(SESSIONS), 401, "unauthorized")
