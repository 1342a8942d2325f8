"""Spec: Errors. The envelope on every path, including the framework's own refusals and
crashes; validation details with dotted field names; a request id on every response."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import structlog
from structlog.testing import LogCapture

from cauri.payments import endpoints
from cauri.payments.service import payments
from cauri.runtime import Runtime
from tests.foundation.builders import API, app_with, client_of
from tests.support import assert_error, make_merchant, momo_body, scalar

SECRET = "postgresql://cauri:hunter2@db.internal/prod"


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The spec's error envelope, exactly: no other key, and a request id to quote."""
    error = assert_error(response, status, code)
    assert set(response.json()) == {"success", "error"}
    # `reference`: Cauri's addition, on a 402 that recorded the failed resource (issue 27).
    assert set(error) <= {"code", "message", "details", "reference"}
    assert response.headers["content-type"].startswith("application/json")
    assert len(response.headers.get("x-request-id", "")) == 32
    assert response.headers["x-content-type-options"] == "nosniff"
    return error


@pytest.fixture
def logs() -> Iterator[LogCapture]:
    """Log events as the service emits them, with the request's context merged in."""
    capture = LogCapture()
    previous = structlog.get_config()
    structlog.configure(processors=[structlog.contextvars.merge_contextvars, capture])
    try:
        yield capture
    finally:
        structlog.configure(**previous)


@pytest.mark.parametrize("path", [f"{API}/nothing-here", f"{API}/payments/a/b/c", "/nothing"])
async def test_unknown_route(client: httpx.AsyncClient, path: str) -> None:
    error = assert_envelope(await client.get(path), 404, "not_found")
    assert "details" not in error


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", f"{API}/payments"),
        ("PUT", f"{API}/payments/x"),
        ("GET", f"{API}/test-helpers/payments/x/succeed"),
    ],
)
async def test_wrong_verb(
    client: httpx.AsyncClient, runtime: Runtime, method: str, path: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.request(method, path, headers=merchant.headers())
    assert_envelope(response, 405, "method_not_allowed")
    assert response.headers.get("allow")


@pytest.mark.parametrize(
    "body",
    [
        b'{"amount": 1000, "operator": ',
        b"not json",
        b'{"amount": 1000,}',
        b"\xff\xfe",
        b'{"amount": NaN}',
        b'{"amount": 1000, "amount": 1000}',
        b'{"description": "\\u0000"}',
    ],
)
async def test_malformed_json(client: httpx.AsyncClient, runtime: Runtime, body: bytes) -> None:
    merchant = await make_merchant(runtime)
    response = await client.post(
        f"{API}/payments",
        content=body,
        headers=merchant.headers() | {"Content-Type": "application/json"},
    )
    error = assert_envelope(response, 422, "invalid_request")
    assert error["details"] and all(
        isinstance(messages, list) and all(isinstance(m, str) and m for m in messages)
        for messages in error["details"].values()
    )
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0


@pytest.mark.parametrize("body", [b"[]", b"42", b'"text"', b"null"])
async def test_body_that_is_not_an_object(
    client: httpx.AsyncClient, runtime: Runtime, body: bytes
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.post(
        f"{API}/payments",
        content=body,
        headers=merchant.headers() | {"Content-Type": "application/json"},
    )
    assert assert_envelope(response, 422, "invalid_request")["details"]


async def test_validation_details_use_dotted_field_names(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    body = momo_body(customer={"email": "not-an-email", "firstname": 12}) | {"amount": None}
    del body["operator"]
    response = await client.post(f"{API}/payments", json=body, headers=merchant.headers())
    details = assert_envelope(response, 422, "invalid_request")["details"]
    assert {"customer.email", "customer.firstname", "amount", "operator"} <= set(details)
    assert all(isinstance(m, list) and m for m in details.values())


async def test_query_validation_names_the_parameter(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.get(f"{API}/payments?status=bogus", headers=merchant.headers())
    assert "status" in assert_envelope(response, 422, "invalid_request")["details"]


async def test_business_errors_carry_the_envelope_and_request_id(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    assert_envelope(await client.get(f"{API}/payments"), 401, "unauthorized")
    refused = await client.post(
        f"{API}/payments", json=momo_body(phone_number="22997000001"), headers=merchant.headers()
    )
    error = assert_envelope(refused, 402, "payment_failed")
    assert "details" not in error and error["reference"]
    missing = await client.get(f"{API}/payments/nope", headers=merchant.headers())
    assert {"details", "reference"}.isdisjoint(assert_envelope(missing, 404, "not_found"))


async def test_oversized_body_without_a_key_is_413_not_401(client: httpx.AsyncClient) -> None:
    response = await client.post(
        f"{API}/payments", content=b"{" + b" " * 300_000 + b"}", headers={"X-Anything": "1"}
    )
    assert "details" not in assert_envelope(response, 413, "payload_too_large")


async def test_request_ids_are_unique_per_response(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    ids = {
        (await client.get(f"{API}/payments", headers=merchant.headers())).headers["x-request-id"]
        for _ in range(5)
    }
    assert len(ids) == 5


async def test_crash_is_a_server_error_that_leaks_nothing(
    client: httpx.AsyncClient,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    logs: LogCapture,
) -> None:
    merchant = await make_merchant(runtime)

    async def crash(*_: object, **__: object) -> None:
        raise RuntimeError(f"connection to {SECRET} lost")

    # A fault deep in our own code, past authentication and inside the unit of work.
    monkeypatch.setattr(payments, "get", crash)
    response = await client.get(f"{API}/payments/anything", headers=merchant.headers())
    error = assert_envelope(response, 500, "server_error")
    assert "details" not in error
    for leak in (SECRET, "hunter2", "RuntimeError", "Traceback", "crash", ".py"):
        assert leak not in response.text
    # The incident is logged, with the request id the client was given.
    crashes = [entry for entry in logs.entries if entry["event"] == "http.unhandled_error"]
    assert len(crashes) == 1
    assert crashes[0]["request_id"] == response.headers["x-request-id"]
    assert SECRET in str(crashes[0]["exc_info"])
    # The service goes on answering.
    monkeypatch.undo()
    assert (await client.get(f"{API}/payments", headers=merchant.headers())).status_code == 200


STAYS_PENDING = "22997330002"  # the simulator leaves a number ending in 0002 pending


async def _nothing_left(runtime: Runtime) -> None:
    """No row, no money, no event, no job."""
    left = await scalar(
        runtime,
        "SELECT json_build_object('payments', (SELECT count(*) FROM payments), "
        "'postings', (SELECT count(*) FROM ledger_postings), "
        "'events', (SELECT count(*) FROM events), 'jobs', (SELECT count(*) FROM jobs))",
    )
    assert left == {"payments": 0, "postings": 0, "events": 0, "jobs": 0}


async def test_crash_rolls_back_the_request(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    merchant = await make_merchant(runtime)
    # A payment left pending is recorded, then sent, in the request's transaction: a crash
    # once it is sent.
    original = payments.initiate

    async def crash_after_initiate(*args: Any, **kwargs: Any) -> Any:
        await original(*args, **kwargs)
        raise RuntimeError("operator adapter bug")

    monkeypatch.setattr(payments, "initiate", crash_after_initiate)
    response = await client.post(
        f"{API}/payments", json=momo_body(phone_number=STAYS_PENDING), headers=merchant.headers()
    )
    assert_envelope(response, 500, "server_error")
    await _nothing_left(runtime)


async def test_a_decided_payments_answer_is_built_before_its_write(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    merchant = await make_merchant(runtime)
    # Settled at once, the payment is written in one statement that commits as it runs
    # (tests/payments/test_hot_path.py): its answer must already be built, so that a fault
    # in it leaves nothing behind its 500.

    def crash(*_: Any, **__: Any) -> Any:
        raise RuntimeError("rendering bug")

    monkeypatch.setattr(endpoints, "payment_object", crash)
    response = await client.post(f"{API}/payments", json=momo_body(), headers=merchant.headers())
    assert_envelope(response, 500, "server_error")
    await _nothing_left(runtime)


async def test_crash_outside_the_unit_of_work(runtime: Runtime) -> None:
    app = app_with(runtime)

    async def explode() -> None:
        raise RuntimeError(SECRET)

    app.add_api_route(f"{API}/explode", explode)
    async with client_of(app) as client:
        response = await client.get(f"{API}/explode")
    assert_envelope(response, 500, "server_error")
    assert SECRET not in response.text
