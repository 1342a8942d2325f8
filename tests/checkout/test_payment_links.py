"""Payment links (issue 25): the API, the link's page (a visit creates nothing), the session a
customer's going on opens, `uses` and the caps, counted under concurrency."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.checkout.builders import fetch, go_on, link_form, make_link, session_of, submit
from tests.checkout.test_attempts import AT_ONCE, PENDING, attempt_of, decide, payment
from tests.support import assert_error, make_merchant, scalar

LINKS = "/api/v1/payment-links"


async def link_now(
    client: httpx.AsyncClient, headers: dict[str, str], ref: str
) -> dict[str, object]:
    found = await client.get(f"{LINKS}/{ref}", headers=headers)
    assert found.status_code == 200, found.text
    data: dict[str, object] = found.json()["data"]
    return data


async def test_a_link_is_made_to_share(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    link = await make_link(client, merchant, external_id="cot-2027", metadata={"club": 7})
    assert link["reference"].startswith("plink_")
    code = link["url"].rsplit("/", 1)[1]
    assert link["url"] == f"http://127.0.0.1/l/{code}" and len(code) == 10
    assert link["qr_code_url"] == f"{link['url']}/qr.svg"
    assert (link["active"], link["uses"], link["reusable"], link["max_uses"]) == (
        True,
        0,
        True,
        None,
    )
    assert (link["amount"], link["currency"], link["description"]) == (
        15000,
        "XOF",
        "Cotisation annuelle",
    )
    assert link["livemode"] is False and link["metadata"] == {"club": 7}
    again = await client.post(
        LINKS, json={"description": "Autre", "external_id": "cot-2027"}, headers=merchant.headers()
    )
    assert again.status_code == 200 and again.json()["data"] == link
    assert await link_now(client, merchant.headers(), "cot-2027") == link
    other = await make_merchant(runtime, name="Autre")
    assert_error(
        await client.get(f"{LINKS}/{link['reference']}", headers=other.headers()), 404, "not_found"
    )
    assert_error(
        await client.get(f"{LINKS}/{link['reference']}", headers=merchant.headers(livemode=True)),
        404,
        "not_found",
    )
    qr = await client.get(f"/l/{code}/qr.svg")
    assert qr.status_code == 200 and qr.headers["content-type"] == "image/svg+xml"
    assert b"<svg" in qr.content and b'xmlns="http://www.w3.org/2000/svg"' in qr.content


BAD_LINKS = [
    ({"amount": 100}, "description"),
    ({"description": "x", "amount": 100, "min_amount": 50}, "amount"),
    ({"description": "x", "amount": None, "min_amount": 500, "max_amount": 100}, "min_amount"),
    ({"description": "x", "max_uses": 0}, "max_uses"),
    ({"description": "x", "reusable": False, "max_uses": 3}, "max_uses"),
    ({"description": "x", "expires_at": "2001-01-01T00:00:00Z"}, "expires_at"),
    ({"description": "x", "amount": -1}, "amount"),
    ({"description": "x", "return_url": "nulle-part"}, "return_url"),
    ({"description": "x", "colour": "bleu"}, "colour"),
]


@pytest.mark.parametrize(("body", "field"), BAD_LINKS)
async def test_bad_input_is_a_422_naming_the_field(
    client: httpx.AsyncClient, runtime: Runtime, body: dict[str, object], field: str
) -> None:
    merchant = await make_merchant(runtime)
    error = assert_error(
        await client.post(LINKS, json=body, headers=merchant.headers()), 422, "invalid_request"
    )
    assert field in error["details"], error
    assert await scalar(runtime, "SELECT count(*) FROM payment_links") == 0


async def test_a_visit_creates_nothing_and_going_on_opens_a_paid_session(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime, name="Club Awa")
    link = await make_link(client, merchant, return_url="https://club.example/merci")
    page = await client.get(httpx.URL(link["url"]).path)
    assert page.status_code == 200 and "Paiement à Club Awa" in page.text
    assert "15\u202f000\u00a0XOF" in page.text and "Cotisation annuelle" in page.text
    assert await scalar(runtime, "SELECT count(*) FROM checkout_sessions") == 0
    opened = await session_of(client, await go_on(client, link))
    checkout = await fetch(client, merchant, opened["reference"])
    assert (checkout["amount"], checkout["payment_link"], checkout["description"]) == (
        15000,
        link["reference"],
        "Cotisation annuelle",
    )
    assert checkout["return_url"] == "https://club.example/merci"
    paid = attempt_of(await submit(client, checkout, "mtn", phone_number=AT_ONCE))
    made = await payment(client, merchant, paid)
    assert (made["payment_link"], made["checkout_session"]) == (
        link["reference"],
        checkout["reference"],
    )
    assert (await link_now(client, merchant.headers(), link["reference"]))["uses"] == 1


async def test_the_customer_types_the_amount_within_the_bounds(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    link = await make_link(client, merchant, amount=None, min_amount=500, max_amount=100000)
    page = await client.get(httpx.URL(link["url"]).path)
    assert 'name="amount"' in page.text and "Entre 500" in page.text
    for typed, message in (
        ("100", "au moins 500"),
        ("cinq mille", "en chiffres"),
        ("200000", "dépasser"),
    ):
        refused = await go_on(client, link, amount=typed)
        assert refused.status_code == 422 and message in refused.text
        assert 'id="amount-error"' in refused.text
    assert await scalar(runtime, "SELECT count(*) FROM checkout_sessions") == 0
    opened = await session_of(client, await go_on(client, link, amount="5 000"))
    assert (await fetch(client, merchant, opened["reference"]))["amount"] == 5000


async def test_a_single_use_link_takes_one_payment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    link = await make_link(client, merchant, reusable=False)
    assert link["max_uses"] == 1
    later = await link_form(client, link)  # a second customer's page, opened meanwhile
    first = await session_of(client, await go_on(client, link))
    attempt_of(await submit(client, first, "mtn", phone_number=AT_ONCE))
    now = await link_now(client, merchant.headers(), link["reference"])
    assert (now["uses"], now["active"]) == (1, False)
    page = await client.get(httpx.URL(link["url"]).path)
    assert page.status_code == 410 and "plus actif" in page.text
    refused = await later()
    assert refused.status_code == 410
    assert await scalar(runtime, "SELECT count(*) FROM checkout_sessions") == 1


async def test_two_visits_paying_a_single_use_link_at_once_count_once(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker
) -> None:
    merchant = await make_merchant(runtime)
    link = await make_link(client, merchant, reusable=False)
    visits = [await session_of(client, await go_on(client, link)) for _ in range(3)]
    attempts = [
        attempt_of(await submit(client, visit, "mtn", phone_number=PENDING)) for visit in visits
    ]
    answers = await asyncio.gather(*(decide(client, merchant, a, "succeed") for a in attempts))
    assert [answer.status_code for answer in answers] == [200] * 3
    await worker.drain()
    statuses = [(await fetch(client, merchant, v["reference"]))["status"] for v in visits]
    assert sorted(statuses) == ["complete", "expired", "expired"]
    assert (await link_now(client, merchant.headers(), link["reference"]))["uses"] == 1
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 2


async def test_a_deactivated_or_expired_link_opens_no_session(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    link = await make_link(client, merchant)
    opened = await session_of(client, await go_on(client, link))
    later = await link_form(client, link)
    off = await client.post(f"{LINKS}/{link['reference']}/deactivate", headers=merchant.headers())
    assert off.status_code == 200 and off.json()["data"]["active"] is False
    assert (await later()).status_code == 410
    # A session opened before stays payable.
    assert (await submit(client, opened, "mtn", phone_number=AT_ONCE)).status_code == 303
    dated = await make_link(
        client, merchant, expires_at=(clock.now() + timedelta(hours=1)).isoformat()
    )
    clock.advance(3600)
    assert (await client.get(httpx.URL(dated["url"]).path)).status_code == 410
    listed = await client.get(LINKS, params={"active": "false"}, headers=merchant.headers())
    assert [found["reference"] for found in listed.json()["data"]] == [link["reference"]]


async def test_a_link_s_form_without_its_token_is_refused(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    link = await make_link(client, merchant)
    forged = await client.post(httpx.URL(link["url"]).path, data={"amount": "100"})
    assert forged.status_code == 403
    assert await scalar(runtime, "SELECT count(*) FROM checkout_sessions") == 0
