"""Issue 12: the docs work offline and the OpenAPI document says everything.

- `/api/v1/docs` loads only assets Cauri serves itself (no CDN), and they answer.
- The document is valid OpenAPI, names the bearer key scheme on every operation, documents
  each error status a route can answer with the error envelope, and leaves internal routes
  out.
- Every operation, driven with real requests (valid, without a key, on a missing resource,
  with an unknown field or parameter), answers a status the document lists, with a body
  valid against the schema it gives (extra keys forbidden: an undocumented field fails).
- The examples of the request schemas are bodies the service accepts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest
from openapi_spec_validator import validate

from cauri.runtime import Runtime
from tests.foundation.builders import API
from tests.support import MerchantKeys, card_body, make_merchant, momo_body

MISSING = "00000000-0000-0000-0000-000000000000"
ERROR_REF = "#/components/schemas/ErrorEnvelope"
SHARED_ERRORS = {"401", "403", "422", "429", "500"}
CONTENT_TYPES = {".js": "javascript", ".css": "text/css", ".png": "image/png"}


@pytest.fixture
async def document(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get(f"{API}/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield method.upper(), path, operation


def request_example(document: dict[str, Any], operation: dict[str, Any]) -> dict[str, Any]:
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    for option in [schema, *schema.get("anyOf", [])]:
        if "$ref" in option:
            named = document["components"]["schemas"][option["$ref"].rsplit("/", 1)[-1]]
            example: dict[str, Any] = named["examples"][0]
            return example
    raise AssertionError(f"no named request schema: {schema}")


def required_query(operation: dict[str, Any]) -> str:
    """The required query parameters, each with the first example of its schema."""
    pairs = [
        f"{parameter['name']}={parameter['schema']['examples'][0]}"
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query" and parameter.get("required")
    ]
    return "?" + "&".join(pairs) if pairs else ""


def assert_documented(
    document: dict[str, Any], operation: dict[str, Any], response: httpx.Response
) -> None:
    """The status is one the operation lists; the body is valid against its schema."""
    label = f"{response.request.method} {response.request.url.path}: {response.status_code}"
    documented = operation["responses"].get(str(response.status_code))
    assert documented is not None, f"{label} is not documented: {response.text[:300]}"
    schema = documented["content"]["application/json"]["schema"]
    if response.status_code >= 400:
        assert schema == {"$ref": ERROR_REF}, label
    whole = schema | {"components": document["components"]}
    validator = jsonschema.Draft202012Validator(
        whole, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    errors = [
        f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(response.json())
    ]
    assert not errors, f"{label} does not match its documented schema: {errors[:5]}"


# --- the docs page -------------------------------------------------------------------------


async def test_the_docs_page_loads_only_assets_cauri_serves(client: httpx.AsyncClient) -> None:
    page = await client.get(f"{API}/docs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", page.text)
    urls += re.findall(r"""url\s*:\s*["']([^"']+)["']""", page.text)
    assert len(urls) >= 4, urls  # script, style sheet, icon, document
    assert not re.search(r"https?://|//cdn|jsdelivr|unpkg", page.text), "an outside address"
    assert '"validatorUrl": null' in page.text  # no call to the public validator
    for url in urls:
        assert url.startswith("/"), url
        answer = await client.get(url)
        assert answer.status_code == 200, url
        suffix = next((s for s in CONTENT_TYPES if url.endswith(s)), None)
        expected = CONTENT_TYPES[suffix] if suffix else "application/json"
        assert expected in answer.headers["content-type"], (url, answer.headers["content-type"])
        assert len(answer.content) > 1000, url


async def test_a_missing_asset_is_404(client: httpx.AsyncClient) -> None:
    assert (await client.get(f"{API}/docs/assets/nothing.js")).status_code == 404


# --- the document ----------------------------------------------------------------------------


async def test_the_document_is_valid_openapi_and_leaves_internal_routes_out(
    document: dict[str, Any],
) -> None:
    validate(document)
    paths = list(document["paths"])
    assert all(path.startswith(f"{API}/") for path in paths), paths
    internal = ("operator-callbacks", "/pay/", "/health", "/ready", "/metrics", "/docs")
    assert not [path for path in paths if any(word in path for word in internal)]
    assert len(list(operations(document))) >= 28


async def test_every_operation_takes_the_bearer_key_and_documents_its_errors(
    document: dict[str, Any],
) -> None:
    schemes = document["components"]["securitySchemes"]
    assert schemes == {"apiKey": schemes["apiKey"]}
    assert schemes["apiKey"]["type"] == "http" and schemes["apiKey"]["scheme"] == "bearer"
    assert "sk_test_" in schemes["apiKey"]["bearerFormat"]
    assert "sk_live_" in schemes["apiKey"]["bearerFormat"]
    for method, path, operation in operations(document):
        label = f"{method} {path}"
        assert operation["security"] == [{"apiKey": []}], label
        responses = operation["responses"]
        assert set(responses) >= SHARED_ERRORS, label
        assert ("{" in path) == ("404" in responses), label
        assert (method in {"POST", "PUT"}) == ("413" in responses), label
        assert "Retry-After" in responses["429"]["headers"], label
        successes = [status for status in responses if status.startswith("2")]
        assert successes, label
        for status, answer in responses.items():
            schema = answer["content"]["application/json"]["schema"]
            assert answer["description"], (label, status)
            if status.startswith("2"):
                name = schema["$ref"].rsplit("/", 1)[-1]
                named = document["components"]["schemas"][name]
                assert named["properties"]["success"]["const"] is True, (label, name)
                assert named["additionalProperties"] is False, (label, name)
            else:
                assert schema == {"$ref": ERROR_REF}, (label, status)
                examples = answer["content"]["application/json"]["examples"]
                for code, example in examples.items():
                    assert example["value"]["error"]["code"] == code
                    assert f"`{code}`" in answer["description"]
    assert "HTTPValidationError" not in document["components"]["schemas"]


async def test_route_specific_refusals_are_documented(document: dict[str, Any]) -> None:
    def codes(method: str, path: str, status: str) -> set[str]:
        answer = document["paths"][f"{API}{path}"][method]["responses"][status]
        return set(answer["content"]["application/json"]["examples"])

    assert codes("post", "/payments", "402") == {"payment_failed"}
    assert codes("post", "/payouts", "402") == {"insufficient_funds", "payout_failed"}
    assert codes("post", "/payouts", "403") == {"payout_limit_exceeded", "merchant_inactive"}
    assert codes("post", "/payments/{reference}/refund", "402") >= {"refund_failed"}
    assert codes("post", "/payments/{reference}/refund", "409") == {"conflict"}
    assert codes("post", "/installment-plans/{reference}/payments", "409") == {"conflict"}
    assert codes("post", "/installment-plans/{reference}/cancel", "409") == {"conflict"}
    assert codes("get", "/payments/{reference}", "401") == {"unauthorized", "key_expired"}
    assert codes("post", "/checkout-sessions/{reference}/expire", "409") == {"conflict"}
    creations = ("/payments", "/payouts", "/payout-batches", "/installment-plans")
    creations += ("/checkout-sessions",)
    for creation in (*creations, "/payment-links"):
        assert {"200", "201"} <= set(document["paths"][f"{API}{creation}"]["post"]["responses"])


async def test_request_schemas_carry_the_real_constraints(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    payment = schemas["PaymentCreate"]
    assert payment["required"] == ["amount", "operator"]
    assert payment["additionalProperties"] is False
    assert {"mtn", "orange_sn", "VISA", "MASTERCARD"} <= set(
        payment["properties"]["operator"]["enum"]
    )
    phone = payment["properties"]["phone_number"]["anyOf"][0]
    assert phone["pattern"] == r"^\+?[0-9]{8,15}$"
    payout = schemas["PayoutCreate"]["properties"]
    assert (payout["amount"]["minimum"], payout["amount"]["maximum"]) == (10, 1_000_000)
    assert "VISA" not in payout["operator"]["anyOf"][0]["enum"]
    plan = schemas["PlanCreate"]["properties"]["target_amount"]
    assert (plan["minimum"], plan["maximum"]) == (1, 99_999_999)
    assert schemas["PlanCreate"]["properties"]["currency"]["$ref"].endswith("/Currency")
    names = ("PaymentCreate", "PaymentFields", "PayoutCreate", "PlanCreate", "RefundCreate")
    for name in (*names, "CheckoutSessionCreate", "PaymentLinkCreate", "PayoutBatchCreate"):
        assert schemas[name]["examples"], name
        jsonschema.validate(
            schemas[name]["examples"][0], schemas[name] | {"components": document["components"]}
        )


# --- real requests against the document ----------------------------------------------------


async def _post(
    client: httpx.AsyncClient, merchant: MerchantKeys, path: str, body: dict[str, Any]
) -> dict[str, Any]:
    response = await client.post(f"{API}{path}", json=body, headers=merchant.headers())
    assert response.status_code in {200, 201}, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def _world(client: httpx.AsyncClient, merchant: MerchantKeys) -> dict[str, dict[str, str]]:
    """Resources for every path parameter, each in the state its operation wants."""
    settled = await _post(client, merchant, "/payments", momo_body(amount=200_000))
    cards = [await _post(client, merchant, "/payments", card_body()) for _ in range(2)]
    plans = [await _post(client, merchant, "/installment-plans", {"target_amount": 50000})]
    plans += [await _post(client, merchant, "/installment-plans", {"target_amount": 50000})]
    plans += [await _post(client, merchant, "/installment-plans", {"target_amount": 50000})]
    held = await _post(
        client,
        merchant,
        "/payouts",
        {"amount": 1000, "operator": "mtn", "phone_number": "22990000002"},
    )
    refund = await _post(
        client, merchant, f"/payments/{settled['reference']}/refund", {"amount": 10}
    )
    batch = await _post(
        client,
        merchant,
        "/payout-batches",
        {"external_id": "world", "items": [{"amount": 10, "operator": "mtn", "external_id": "w"}]},
    )
    await _post(client, merchant, "/webhooks/test", {})
    checkout = await _post(
        client, merchant, "/checkout-sessions", {"amount": 100, "return_url": "https://b.example"}
    )
    link = await _post(client, merchant, "/payment-links", {"description": "Don", "amount": 100})
    events = await client.get(f"{API}/events", headers=merchant.headers())
    deliveries = await client.get(f"{API}/webhooks/deliveries", headers=merchant.headers())
    return {
        "/payments/{reference}": {"reference": settled["reference"]},
        "/test-helpers/payments/{reference}/succeed": {"reference": cards[0]["reference"]},
        "/test-helpers/payments/{reference}/fail": {"reference": cards[1]["reference"]},
        "/installment-plans/{reference}": {"reference": plans[0]["reference"]},
        "/installment-plans/{reference}/payments": {"reference": plans[0]["reference"]},
        "/installment-plans/{reference}/cancel": {"reference": plans[1]["reference"]},
        "/test-helpers/installment-plans/{reference}/expire": {"reference": plans[2]["reference"]},
        "/payouts/{reference}": {"reference": held["reference"]},
        "/test-helpers/payouts/{reference}/{outcome}": {
            "reference": held["reference"],
            "outcome": "succeed",
        },
        "/payments/{reference}/refund": {"reference": settled["reference"]},
        "/refunds/{reference}": {"reference": refund["reference"]},
        "/payout-batches/{reference}": {"reference": batch["reference"]},
        "/checkout-sessions/{reference}": {"reference": checkout["reference"]},
        "/checkout-sessions/{reference}/expire": {"reference": checkout["reference"]},
        "/payment-links/{reference}": {"reference": link["reference"]},
        "/payment-links/{reference}/deactivate": {"reference": link["reference"]},
        "/events/{event_id}": {"event_id": events.json()["data"][0]["id"]},
        "/webhooks/deliveries/{delivery_id}/retry": {
            "delivery_id": (deliveries.json()["data"] or [{"id": MISSING}])[0]["id"]
        },
    }


def _filled(path: str, values: dict[str, str], missing: bool = False) -> str:
    for name, value in values.items():
        given = MISSING if missing and name != "outcome" else value
        path = path.replace(f"{{{name}}}", given)
    return path


# Valid requests whose state the world cannot make a success: no delivery has failed yet.
REFUSED_WHEN_VALID = {("POST", "/webhooks/deliveries/{delivery_id}/retry"): {404, 409}}


async def test_every_operation_answers_as_it_is_documented(
    client: httpx.AsyncClient, runtime: Runtime, document: dict[str, Any]
) -> None:
    merchant = await make_merchant(runtime)
    world = await _world(client, merchant)
    headers = merchant.headers()
    checked = 0
    for method, path, operation in operations(document):
        route = path.removeprefix(API)
        values = world.get(route, {})
        body = request_example(document, operation) if "requestBody" in operation else None
        url = f"{API}{_filled(route, values)}{required_query(operation)}"

        valid = await client.request(method, url, json=body, headers=headers)
        assert_documented(document, operation, valid)
        expected = REFUSED_WHEN_VALID.get((method, route))
        if expected is None:
            assert valid.status_code < 300, f"{method} {url}: {valid.text[:300]}"
        else:
            assert valid.status_code in expected, f"{method} {url}: {valid.text[:300]}"

        keyless = await client.request(method, url, json=body)
        assert keyless.status_code == 401
        assert_documented(document, operation, keyless)

        joined = f"{url}&nope=1" if "?" in url else f"{url}?nope=1"
        unknown_parameter = await client.request(method, joined, json=body, headers=headers)
        assert unknown_parameter.status_code == 422
        assert_documented(document, operation, unknown_parameter)

        if values:
            missing = f"{API}{_filled(route, values, missing=True)}"
            absent = await client.request(method, missing, json=body, headers=headers)
            assert absent.status_code == 404, f"{method} {missing}: {absent.text[:300]}"
            assert_documented(document, operation, absent)

        if method in {"POST", "PUT"}:
            unknown_field = await client.request(method, url, json={"nope": 1}, headers=headers)
            assert unknown_field.status_code == 422, f"{method} {url}: {unknown_field.text}"
            assert_documented(document, operation, unknown_field)
        checked += 1
    assert checked >= 28


async def test_the_examples_of_the_request_schemas_are_accepted(
    client: httpx.AsyncClient, runtime: Runtime, document: dict[str, Any]
) -> None:
    merchant = await make_merchant(runtime)
    headers = merchant.headers()
    schemas = document["components"]["schemas"]
    # A balance for the payout: a Mobile Money payment that succeeds at once.
    await _post(client, merchant, "/payments", momo_body(amount=100_000))
    for example in schemas["PaymentCreate"]["examples"]:
        response = await client.post(f"{API}/payments", json=example, headers=headers)
        assert response.status_code == 201, response.text
    payout = schemas["PayoutCreate"]["examples"][0]
    response = await client.post(f"{API}/payouts", json=payout, headers=headers)
    assert response.status_code == 201, response.text
    plan_example = schemas["PlanCreate"]["examples"][0]
    response = await client.post(f"{API}/installment-plans", json=plan_example, headers=headers)
    assert response.status_code == 201, response.text
    plan = response.json()["data"]["reference"]
    instalment = schemas["PaymentFields"]["examples"][0]
    response = await client.post(
        f"{API}/installment-plans/{plan}/payments", json=instalment, headers=headers
    )
    assert response.status_code == 201, response.text
