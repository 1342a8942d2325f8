"""Issue 12, strict input: money never moves on a misunderstanding. An unknown body field or
query parameter is a 422 naming it, on every /api/v1 route (those added later too), but not
where operators and customers' browsers call; the messages are French sentences for people;
every response is encoded alike, the framework's and the middleware's refusals included."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from cauri.runtime import Runtime
from tests.foundation.builders import API, app_with, client_of
from tests.foundation.test_bad_input import nothing_written
from tests.foundation.test_errors import assert_envelope
from tests.foundation.test_every_route import operations, requests_for
from tests.payouts.builders import payout_body, top_up
from tests.support import card_body, make_merchant, momo_body, scalar

UNKNOWN_FIELD = ["Champ inconnu."]
UNKNOWN_PARAMETER = ["Paramètre inconnu."]


# --- unknown fields in a body ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/payments", momo_body(amout=500), "amout"),
        ("/payments", momo_body(customer={"firstname": "Awa", "phone": "1"}), "customer.phone"),
        ("/payouts", payout_body(beneficiary="Awa"), "beneficiary"),
        ("/installment-plans", {"target_amount": 10_000, "penalty": 0}, "penalty"),
        # An instalment's body is a payment's without description and external_id (spec).
        ("/installment-plans/{plan}/payments", momo_body(external_id="x"), "external_id"),
        ("/installment-plans/{plan}/cancel", {"reason": "x", "refund": False}, "refund"),
        ("/payments/{payment}/refund", {"reason": "x", "amont": 100}, "amont"),
    ],
)
async def test_unknown_body_field_is_refused_and_nothing_moves(
    client: httpx.AsyncClient, runtime: Runtime, path: str, body: dict[str, Any], field: str
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 100_000)
    plan = await client.post(
        f"{API}/installment-plans", json={"target_amount": 10_000}, headers=merchant.headers()
    )
    payment = await client.post(f"{API}/payments", json=momo_body(), headers=merchant.headers())
    before = await _footprint(runtime)
    url = API + path.format(
        plan=plan.json()["data"]["reference"], payment=payment.json()["data"]["reference"]
    )
    response = await client.post(url, json=body, headers=merchant.headers())
    details = assert_envelope(response, 422, "invalid_request")["details"]
    assert details == {field: UNKNOWN_FIELD}
    assert await _footprint(runtime) == before


async def _footprint(runtime: Runtime) -> Any:
    return await scalar(
        runtime,
        "SELECT json_build_array((SELECT count(*) FROM payments), (SELECT count(*) FROM payouts),"
        " (SELECT count(*) FROM refunds), (SELECT count(*) FROM installment_plans),"
        " (SELECT count(*) FROM ledger_postings), (SELECT count(*) FROM events),"
        " (SELECT count(*) FROM installment_plans WHERE cancelled_at IS NOT NULL))",
    )


async def test_webhook_endpoint_body_is_strict(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    response = await client.put(
        f"{API}/webhooks/endpoint",
        json={"url": "https://example.com/hooks", "rotate": True},
        headers=merchant.headers(),
    )
    assert assert_envelope(response, 422, "invalid_request")["details"] == {"rotate": UNKNOWN_FIELD}


async def test_metadata_stays_free_form(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    metadata = {"order": {"lines": [{"sku": "A1", "qty": 2}]}, "anything": None}
    response = await client.post(
        f"{API}/payments", json=momo_body(metadata=metadata), headers=merchant.headers()
    )
    assert response.status_code == 201, response.text
    assert response.json()["data"]["metadata"] == metadata


async def test_every_unknown_field_is_named(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    body = card_body(colour="red", customer={"firstname": "A", "lastname": "B", "mail": "x"})
    response = await client.post(f"{API}/payments", json=body, headers=merchant.headers())
    details = assert_envelope(response, 422, "invalid_request")["details"]
    assert details == {"colour": UNKNOWN_FIELD, "customer.mail": UNKNOWN_FIELD}
    await nothing_written(runtime)


@pytest.mark.parametrize(
    ("body", "details"),
    [
        (b'{"url": "https://example.com"}', {"url": UNKNOWN_FIELD}),
        (b"[1]", {"body": ["Cette route ne prend pas de corps de requête."]}),
    ],
)
async def test_a_route_without_a_body_refuses_one(
    client: httpx.AsyncClient, runtime: Runtime, body: bytes, details: dict[str, Any]
) -> None:
    merchant = await make_merchant(runtime)
    headers = merchant.headers() | {"Content-Type": "application/json"}
    response = await client.post(f"{API}/webhooks/test", content=body, headers=headers)
    assert assert_envelope(response, 422, "invalid_request")["details"] == details
    assert await scalar(runtime, "SELECT count(*) FROM events") == 0


@pytest.mark.parametrize("body", [b"", b"{}", b"null", b"  "])
async def test_an_empty_body_is_no_body(
    client: httpx.AsyncClient, runtime: Runtime, body: bytes
) -> None:
    merchant = await make_merchant(runtime)
    headers = merchant.headers() | {"Content-Type": "application/json"}
    response = await client.post(f"{API}/webhooks/test", content=body, headers=headers)
    assert response.status_code == 200, response.text


# --- unknown query parameters ---------------------------------------------------------------


async def test_every_route_refuses_an_unknown_query_parameter(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Every operation of the document, so that a route added later is covered as it is."""
    merchant = await make_merchant(runtime)
    document = (await client.get(f"{API}/openapi.json")).json()
    checked = 0
    for method, path, _ in operations(document):
        url = re.sub(r"\{[^}]+\}", "00000000-0000-0000-0000-000000000000", path)
        response = await client.request(
            method, f"{url}?colour=red", json={}, headers=merchant.headers()
        )
        details = assert_envelope(response, 422, "invalid_request")["details"]
        assert details == {"colour": UNKNOWN_PARAMETER}, (method, path)
        checked += 1
    assert checked >= 25


@pytest.mark.parametrize(
    ("path", "query", "unknown"),
    [
        ("/payments", "from=2026-01-01&amount=5", "amount"),
        ("/installment-plans", "status=pending&from=2026-01-01", "from"),
        ("/payouts", "per_page=5&statut=pending", "statut"),
        ("/webhooks/deliveries", "page=1&event=payment.succeeded", "event"),
        ("/events", "type=payment.succeeded&reference=x", "reference"),
        ("/payment-modes", "country=BJ&currency=XOF", "currency"),
        ("/balance", "currency=XOF", "currency"),
        ("/payments/00000000-0000-0000-0000-000000000000", "expand=customer", "expand"),
    ],
)
async def test_known_parameters_pass_unknown_ones_are_named(
    client: httpx.AsyncClient, runtime: Runtime, path: str, query: str, unknown: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.get(f"{API}{path}?{query}", headers=merchant.headers())
    details = assert_envelope(response, 422, "invalid_request")["details"]
    assert details == {unknown: UNKNOWN_PARAMETER}


async def test_operators_and_the_hosted_page_are_not_strict(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await client.post(f"{API}/payments", json=card_body(), headers=merchant.headers())
    reference = payment.json()["data"]["reference"]
    page = await client.get(f"/pay/{reference}?utm_source=mail")
    assert page.status_code == 200
    back = await client.get(f"/pay/{reference}/return?transaction_id=1&token=t")
    assert back.status_code in {200, 303}
    # Operators send what they send: whatever the answer, it is not about their parameters.
    callback = await client.post(
        f"{API}/operator-callbacks/simulator?cpm_trans_id=1", json={"any": {"thing": 1}}
    )
    assert "Paramètre inconnu." not in callback.text
    assert "Champ inconnu." not in callback.text


# --- messages for people ----------------------------------------------------------------------

ENGLISH = re.compile(
    r"\b(input|should|string|value|pattern|required|extra|valid|characters?|greater|less|"
    r"than|least|most|unable|parse|digits?|integer|number|expected|error|field|type|must)\b",
    re.IGNORECASE,
)
REGEX = re.compile(r"[\^$]|\\[dswDSW]|\(\?|\[\^|\.\*|\.\+")
STATUS_WORDS = re.compile(r"\b(pending|succeeded|failed|refunded)\b")
QUOTED = re.compile(r"«[^»]*»")


def assert_for_people(response: httpx.Response) -> None:
    if response.status_code < 400 or response.headers["content-type"].startswith("text/html"):
        return
    error = response.json()["error"]
    messages = [error["message"], *(m for ms in (error.get("details") or {}).values() for m in ms)]
    label = f"{response.request.method} {str(response.request.url)[:120]}: {messages}"
    for message in messages:
        # What a message quotes, « between guillemets », is the client's or the API's own.
        own = QUOTED.sub("«»", message)
        assert not ENGLISH.search(own), label
        assert not REGEX.search(own), label
        assert not STATUS_WORDS.search(own), label
        assert own[:1].isupper() or own.startswith("«"), label
        assert own.rstrip().endswith((".", "?", "!")), label


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/payments", momo_body(amount="1000"), "amount"),
        ("POST", "/payments", momo_body(amount=-5), "amount"),
        ("POST", "/payments", momo_body(amount=10**20), "amount"),
        ("POST", "/payments", momo_body(operator=""), "operator"),
        ("POST", "/payments", momo_body(operator=42), "operator"),
        ("POST", "/payments", momo_body(description="x" * 256), "description"),
        ("POST", "/payments", momo_body(currency="GBP"), "currency"),
        ("POST", "/payments", momo_body(return_url="ftp://x"), "return_url"),
        ("POST", "/payments", momo_body(customer={"email": "nobody"}), "customer.email"),
        ("POST", "/payments", momo_body(customer=[1]), "customer"),
        ("POST", "/payments", momo_body(metadata=[1]), "metadata"),
        ("POST", "/payments", {"operator": "mtn"}, "amount"),
        ("POST", "/payouts", payout_body(currency="EUR"), "currency"),
        ("POST", "/installment-plans", {"target_amount": 0}, "target_amount"),
        ("POST", "/installment-plans", {"target_amount": True}, "target_amount"),
        ("PUT", "/webhooks/endpoint", {"rotate_secret": "maybe"}, "rotate_secret"),
        ("PUT", "/webhooks/endpoint", {"url": 5}, "url"),
        ("GET", "/payments?status=paid", None, "status"),
        ("GET", "/payments?per_page=abc", None, "per_page"),
        ("GET", "/payments?page=0", None, "page"),
        ("GET", "/payments?per_page=101", None, "per_page"),
        ("GET", "/payments?from=hier", None, "from"),
        ("GET", "/payment-modes?country=FR", None, "country"),
        ("GET", "/payment-modes?type=cash", None, "type"),
        ("GET", "/events?type=" + "x" * 65, None, "type"),
        ("GET", "/webhooks/deliveries?status=ok", None, "status"),
    ],
)
async def test_validation_messages_are_french_sentences(
    client: httpx.AsyncClient,
    runtime: Runtime,
    method: str,
    path: str,
    body: Any,
    field: str,
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.request(method, API + path, json=body, headers=merchant.headers())
    assert field in assert_envelope(response, 422, "invalid_request")["details"]
    assert_for_people(response)


async def test_choices_and_bounds_are_spelled_out(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    headers = merchant.headers()
    statuses = await client.get(f"{API}/payments?status=paid", headers=headers)
    assert statuses.json()["error"]["details"]["status"] == [
        "Doit être l'une de ces valeurs : « pending », « succeeded », « refunded » ou « failed »."
    ]
    long = await client.post(
        f"{API}/payments", json=momo_body(description="x" * 256), headers=headers
    )
    assert long.json()["error"]["details"]["description"] == [
        "Ne doit pas dépasser 255 caractères."
    ]
    email = await client.post(
        f"{API}/payments", json=momo_body(customer={"email": "nobody"}), headers=headers
    )
    assert email.json()["error"]["details"]["customer.email"] == [
        "Doit être une adresse e-mail valide."
    ]


async def test_a_decided_payment_says_its_status_in_french(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await client.post(f"{API}/payments", json=momo_body(), headers=merchant.headers())
    reference = payment.json()["data"]["reference"]
    again = await client.post(
        f"{API}/test-helpers/payments/{reference}/fail", headers=merchant.headers()
    )
    assert assert_envelope(again, 409, "conflict")["message"] == "Le paiement est déjà réussi."


async def test_no_refusal_of_the_bad_input_table_speaks_english(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """The bad-input table of every documented operation (tests/foundation/test_every_route)."""
    merchant = await make_merchant(runtime)
    headers = merchant.headers() | {"Content-Type": "application/json"}
    document = (await client.get(f"{API}/openapi.json")).json()
    for method, path, operation in operations(document):
        for verb, url, body in requests_for(document, method, path, operation):
            assert_for_people(await client.request(verb, url, content=body, headers=headers))


# --- one JSON encoding ------------------------------------------------------------------------


def assert_encoded_like_the_renderer(response: httpx.Response) -> None:
    assert response.headers["content-type"] == "application/json", response.headers
    canonical = json.dumps(response.json(), ensure_ascii=False, separators=(",", ":"))
    assert response.content == canonical.encode(), response.content


async def test_every_refusal_is_encoded_alike(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    refusals = [
        await client.get(f"{API}/payments"),  # 401
        await client.get(f"{API}/payments/nope", headers=merchant.headers()),  # 404
        await client.get(f"{API}/nothing-here"),  # 404 of the router
        await client.delete(f"{API}/payments"),  # 405
        await client.get(f"{API}/payments?colour=red", headers=merchant.headers()),  # 422
        await client.post(
            f"{API}/payments", content=b"x" * (300 * 1024), headers=merchant.headers()
        ),  # 413
    ]
    assert [r.status_code for r in refusals] == [401, 404, 404, 405, 422, 413]
    for response in refusals:
        assert_encoded_like_the_renderer(response)
    success = await client.get(f"{API}/payments", headers=merchant.headers())
    assert_encoded_like_the_renderer(success)


async def test_the_429_is_encoded_like_the_rest(runtime: Runtime) -> None:
    async with client_of(app_with(runtime, rate_limit="1/minute")) as client:
        await client.get(f"{API}/payment-modes")
        limited = await client.get(f"{API}/payment-modes")
    assert_envelope(limited, 429, "rate_limited")
    assert_encoded_like_the_renderer(limited)
    # French as written, not \u-escaped.
    assert "requêtes".encode() in limited.content
    assert int(limited.headers["retry-after"]) >= 1
