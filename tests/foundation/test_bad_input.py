"""Issue 8: bad input never reaches a 500 and never stalls the server. Oversized bodies (413,
before parsing and authentication), bounded metadata, NUL bytes, page and date overflow,
amounts read exactly from the JSON text, repeated keys; nothing written on a refusal."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from cauri.app import create_app
from cauri.config import Settings
from cauri.kit.body_limit import MAX_BODY_BYTES
from cauri.kit.metadata import MAX_METADATA_BYTES, MAX_METADATA_KEYS
from cauri.kit.strict_json import MAX_DEPTH
from cauri.runtime import Runtime
from tests.foundation.builders import API, app_with, client_of
from tests.foundation.test_errors import assert_envelope
from tests.support import ServerThread, make_merchant, momo_body, scalar

CHUNK = 64 * 1024
HUGE = 15 * 1024 * 1024


async def nothing_written(runtime: Runtime) -> None:
    left = await scalar(
        runtime,
        "SELECT json_build_object('payments', (SELECT count(*) FROM payments), "
        "'payouts', (SELECT count(*) FROM payouts), "
        "'plans', (SELECT count(*) FROM installment_plans), "
        "'postings', (SELECT count(*) FROM ledger_postings), "
        "'events', (SELECT count(*) FROM events))",
    )
    assert left == {"payments": 0, "payouts": 0, "plans": 0, "postings": 0, "events": 0}


async def post_raw(
    client: httpx.AsyncClient, path: str, body: bytes, headers: dict[str, str]
) -> httpx.Response:
    return await client.post(
        f"{API}{path}", content=body, headers=headers | {"Content-Type": "application/json"}
    )


# --- 413: oversized bodies ------------------------------------------------------------------


class AsgiCall:
    """Drives the app by hand, counting the body bytes it pulls from the client."""

    def __init__(self, runtime: Runtime) -> None:
        self.app = create_app(runtime)
        self.bytes_read = 0
        self.messages: list[dict[str, Any]] = []

    async def post(self, chunks: Iterator[bytes], headers: list[tuple[bytes, bytes]]) -> int:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": f"{API}/payments",
            "raw_path": f"{API}/payments".encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"host", b"testserver"), *headers],
            "client": ("127.0.0.1", 40000),
            "server": ("testserver", 80),
        }
        pending = iter(chunks)

        async def receive() -> dict[str, Any]:
            chunk = next(pending, None)
            if chunk is None:
                return {"type": "http.disconnect"}
            self.bytes_read += len(chunk)
            return {"type": "http.request", "body": chunk, "more_body": True}

        async def send(message: dict[str, Any]) -> None:
            self.messages.append(message)

        await self.app(scope, receive, send)
        return int(self.messages[0]["status"])

    def json(self) -> dict[str, Any]:
        body = b"".join(m.get("body", b"") for m in self.messages[1:])
        data: dict[str, Any] = json.loads(body)
        return data

    def headers(self) -> dict[bytes, bytes]:
        return dict(self.messages[0]["headers"])


def endless(chunk: int = CHUNK, total: int = HUGE) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        sent += chunk
        yield b" " * chunk


async def test_declared_oversized_body_is_refused_before_a_byte_is_read(runtime: Runtime) -> None:
    call = AsgiCall(runtime)
    status = await call.post(endless(), [(b"content-length", str(HUGE).encode())])
    assert status == 413
    assert call.json()["error"]["code"] == "payload_too_large"
    assert call.bytes_read == 0
    # No key was sent: the size is judged before authentication.
    assert call.headers()[b"x-content-type-options"] == b"nosniff"
    assert len(call.headers()[b"x-request-id"]) == 32


@pytest.mark.parametrize(
    "headers",
    [[(b"transfer-encoding", b"chunked")], [(b"content-length", b"100")]],
    ids=["chunked", "lying-length"],
)
async def test_streamed_body_is_cut_off_past_the_limit(
    runtime: Runtime, headers: list[tuple[bytes, bytes]]
) -> None:
    call = AsgiCall(runtime)
    assert await call.post(endless(), headers) == 413
    assert call.json()["error"]["code"] == "payload_too_large"
    assert MAX_BODY_BYTES < call.bytes_read <= MAX_BODY_BYTES + CHUNK


async def test_body_at_the_limit_is_read(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    text = json.dumps(momo_body()).encode()
    padded = text[:-1] + b" " * (MAX_BODY_BYTES - len(text)) + b"}"
    assert len(padded) == MAX_BODY_BYTES
    created = await post_raw(client, "/payments", padded, merchant.headers())
    assert created.status_code == 201, created.text
    over = await post_raw(client, "/payments", padded + b" ", merchant.headers())
    assert_envelope(over, 413, "payload_too_large")
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 1


@pytest.fixture
def server(settings: Settings, database_url: str) -> Iterator[ServerThread]:
    with ServerThread(settings, database_url) as server:
        yield server


async def test_real_chunked_upload_gets_413(server: ServerThread) -> None:
    async def upload() -> AsyncIterator[bytes]:
        for chunk in endless(16 * 1024, MAX_BODY_BYTES + 64 * 1024):
            yield chunk

    async with httpx.AsyncClient(base_url=server.base_url, timeout=15) as http:
        response = await http.post(
            f"{API}/payments", content=upload(), headers={"Content-Type": "application/json"}
        )
    assert response.request.headers["transfer-encoding"] == "chunked"
    assert_envelope(response, 413, "payload_too_large")
    assert response.headers["x-content-type-options"] == "nosniff"


# --- metadata bounds ------------------------------------------------------------------------


def routes_with_metadata() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("/payments", momo_body()),
        ("/installment-plans/any-plan/payments", momo_body()),
        ("/payouts", {"amount": 1000, "phone_number": "22997000000", "operator": "mtn"}),
    ]


@pytest.mark.parametrize(("path", "body"), routes_with_metadata())
@pytest.mark.parametrize(
    "metadata",
    [
        {f"k{i}": i for i in range(MAX_METADATA_KEYS + 1)},
        {"note": "x" * MAX_METADATA_BYTES},
        {"deep": {"deeper": "é" * (MAX_METADATA_BYTES // 2)}},
    ],
    ids=["51-keys", "over-8KiB", "over-8KiB-in-utf8"],
)
async def test_metadata_is_bounded(
    client: httpx.AsyncClient,
    runtime: Runtime,
    path: str,
    body: dict[str, Any],
    metadata: dict[str, Any],
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.post(
        f"{API}{path}", json=body | {"metadata": metadata}, headers=merchant.headers()
    )
    assert "metadata" in assert_envelope(response, 422, "invalid_request")["details"]
    await nothing_written(runtime)


async def test_metadata_at_its_bounds_is_stored_as_sent(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    metadata: dict[str, Any] = {f"k{i:02}": i for i in range(MAX_METADATA_KEYS - 3)}
    metadata |= {"ratio": 0.25, "nested": {"list": [1, "deux", None, True]}}
    compact = len(json.dumps(metadata, separators=(",", ":")).encode())
    metadata["pad"] = "x" * (MAX_METADATA_BYTES - compact - len(',"pad":""'))
    assert len(json.dumps(metadata, separators=(",", ":")).encode()) == MAX_METADATA_BYTES
    response = await client.post(
        f"{API}/payments", json=momo_body(metadata=metadata), headers=merchant.headers()
    )
    assert response.status_code == 201, response.text
    assert response.json()["data"]["metadata"] == metadata
    reference = response.json()["data"]["reference"]
    read = await client.get(f"{API}/payments/{reference}", headers=merchant.headers())
    assert read.json()["data"]["metadata"] == metadata


@pytest.mark.parametrize("number", ["1e999", "-1e999"])
async def test_metadata_number_beyond_a_double_is_refused(
    client: httpx.AsyncClient, runtime: Runtime, number: str
) -> None:
    merchant = await make_merchant(runtime)
    body = json.dumps(momo_body(metadata={"n": 0})).replace('"n": 0', f'"n": {number}')
    response = await post_raw(client, "/payments", body.encode(), merchant.headers())
    assert "metadata" in assert_envelope(response, 422, "invalid_request")["details"]
    await nothing_written(runtime)


# --- NUL bytes and other characters PostgreSQL cannot store ---------------------------------


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"description": "caf\x00é"}, "description"),
        ({"customer": {"firstname": "\x00"}}, "customer.firstname"),
        ({"metadata": {"order": "A\x00B"}}, "metadata.order"),
        ({"metadata": {"list": ["ok", "\x00"]}}, "metadata.list"),
        ({"metadata": {"ke\x00y": 1}}, "metadata"),
        ({"external_id": "\ud800"}, "external_id"),
    ],
)
async def test_unstorable_character_in_a_string_field(
    client: httpx.AsyncClient, runtime: Runtime, overrides: dict[str, Any], field: str
) -> None:
    merchant = await make_merchant(runtime)
    # json.dumps writes "\u0000" and "\ud800" as escapes: valid JSON text, unstorable strings.
    body = json.dumps(momo_body(**overrides)).encode()
    response = await post_raw(client, "/payments", body, merchant.headers())
    assert field in assert_envelope(response, 422, "invalid_request")["details"]
    await nothing_written(runtime)


@pytest.mark.parametrize(
    ("method", "path", "field"),
    [
        ("GET", "/payments/ab%00cd", "reference"),
        ("GET", "/payouts/%00", "reference"),
        ("GET", "/installment-plans/%00", "reference"),
        ("GET", "/refunds/%00", "reference"),
        ("GET", "/events/%00", "event_id"),
        ("POST", "/payments/%00/refund", "reference"),
        ("POST", "/installment-plans/%00/cancel", "reference"),
        ("POST", "/webhooks/deliveries/%00/retry", "delivery_id"),
        ("POST", "/test-helpers/payments/%00/succeed", "reference"),
        ("POST", "/test-helpers/payouts/%00/fail", "reference"),
        ("GET", "/events?type=%00", "type"),
        ("GET", "/payouts?from=2026-01-01%00", "from"),
        ("GET", "/payment-modes?country=BJ%00", "country"),
        ("GET", "/payments?unknown=%00", "unknown"),
        ("GET", "/payments?%00=1", "query"),
    ],
)
async def test_nul_in_a_path_or_query_parameter(
    client: httpx.AsyncClient, runtime: Runtime, method: str, path: str, field: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.request(method, f"{API}{path}", headers=merchant.headers())
    assert field in assert_envelope(response, 422, "invalid_request")["details"]


async def test_nul_in_the_hosted_page_address_is_an_html_refusal(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/pay/%00")
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["x-content-type-options"] == "nosniff"


# --- page and date overflow -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/payments", "/payouts", "/installment-plans", "/events", "/webhooks/deliveries"]
)
async def test_page_is_bounded(client: httpx.AsyncClient, runtime: Runtime, path: str) -> None:
    merchant = await make_merchant(runtime)
    last = await client.get(f"{API}{path}?page=1000000&per_page=100", headers=merchant.headers())
    assert last.status_code == 200, last.text
    assert last.json()["data"] == []
    for page in ("1000001", "92233720368547758", "9" * 40):
        beyond = await client.get(f"{API}{path}?page={page}", headers=merchant.headers())
        assert "page" in assert_envelope(beyond, 422, "invalid_request")["details"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("to=9999-12-31", "to"),
        ("to=9999-12-31T23:59:59.999999", "to"),
        ("to=9999-12-31T23:00:00-05:00", "to"),
        ("from=0001-01-01T00:00:00%2B01:00", "from"),
        ("from=0001-01-01T00:30:00%2B14:00&to=2026-01-01", "from"),
    ],
)
async def test_dates_beyond_the_calendar_are_refused(
    client: httpx.AsyncClient, runtime: Runtime, query: str, field: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.get(f"{API}/payouts?{query}", headers=merchant.headers())
    assert field in assert_envelope(response, 422, "invalid_request")["details"]


async def test_dates_at_the_ends_of_the_calendar_are_accepted(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.get(
        f"{API}/payouts?from=0001-01-01&to=9999-12-30", headers=merchant.headers()
    )
    assert response.status_code == 200, response.text


# --- amounts read exactly; repeated keys ----------------------------------------------------

AMOUNT_ROUTES = [
    ("/payments", "amount", '{"operator": "mtn", "phone_number": "22997000000", "amount": %s}'),
    ("/payouts", "amount", '{"operator": "mtn", "phone_number": "22997000000", "amount": %s}'),
    ("/installment-plans", "target_amount", '{"target_amount": %s}'),
]


@pytest.mark.parametrize(("path", "field", "template"), AMOUNT_ROUTES)
@pytest.mark.parametrize(
    "amount",
    ["1000.00000000000001", '"1000"', "true", "1000.5", "[1000]", "{}", "1e400", "1" + "0" * 5000],
)
async def test_amount_must_be_an_exact_json_number(
    client: httpx.AsyncClient,
    runtime: Runtime,
    path: str,
    field: str,
    template: str,
    amount: str,
) -> None:
    merchant = await make_merchant(runtime)
    response = await post_raw(client, path, (template % amount).encode(), merchant.headers())
    details = assert_envelope(response, 422, "invalid_request")["details"]
    assert field in details or "body" in details
    await nothing_written(runtime)


@pytest.mark.parametrize("amount", ["1000", "1000.0", "1e3", "1000.000000000"])
async def test_amount_spelled_as_any_exact_number(
    client: httpx.AsyncClient, runtime: Runtime, amount: str
) -> None:
    merchant = await make_merchant(runtime)
    template = AMOUNT_ROUTES[0][2]
    response = await post_raw(client, "/payments", (template % amount).encode(), merchant.headers())
    assert response.status_code == 201, response.text
    assert response.json()["data"]["amount"] == 1000


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            '{"amount": 1000, "operator": "mtn", "phone_number": "22997000000", "amount": 1}',
            "amount",
        ),
        (
            '{"amount": 1000, "operator": "mtn", "phone_number": "22997000000",'
            ' "customer": {"email": "a@b.cd", "email": "e@f.gh"}}',
            "customer.email",
        ),
        (
            '{"amount": 1000, "operator": "mtn", "phone_number": "22997000000",'
            ' "metadata": {"a": {"b": 1, "b": 2}}}',
            "metadata.a.b",
        ),
    ],
)
async def test_repeated_key_is_refused(
    client: httpx.AsyncClient, runtime: Runtime, body: str, field: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await post_raw(client, "/payments", body.encode(), merchant.headers())
    assert field in assert_envelope(response, 422, "invalid_request")["details"]
    await nothing_written(runtime)


@pytest.mark.parametrize(
    "body",
    [
        b'{"amount": NaN, "operator": "mtn"}',
        b'{"amount": Infinity, "operator": "mtn"}',
        b'{"amount": 1000, "operator": "mtn", "metadata": ' + b'{"a": ' * 40 + b"1" + b"}" * 41,
        b'{"amount": 1000, "operator": "mtn", "metadata": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}",
        '{"amount": 1000, "operator": "mtn", "description": "café"}'.encode("latin-1"),
    ],
    ids=["nan", "infinity", "nested-40", "nested-100000", "latin-1"],
)
async def test_body_that_no_strict_json_reader_takes(
    client: httpx.AsyncClient, runtime: Runtime, body: bytes
) -> None:
    merchant = await make_merchant(runtime)
    response = await post_raw(client, "/payments", body, merchant.headers())
    assert assert_envelope(response, 422, "invalid_request")["details"]
    await nothing_written(runtime)


async def test_nesting_within_the_bound_is_kept(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    nested: Any = "fond"
    for _ in range(MAX_DEPTH - 2):  # the body and `metadata` are two levels already
        nested = {"n": nested}
    response = await client.post(
        f"{API}/payments", json=momo_body(metadata={"n": nested}), headers=merchant.headers()
    )
    assert response.status_code == 201, response.text


# --- nosniff --------------------------------------------------------------------------------


async def test_every_kind_of_response_says_nosniff(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    payment = await client.post(f"{API}/payments", json=momo_body(), headers=merchant.headers())
    responses = [
        payment,
        await client.get(f"{API}/payments", headers=merchant.headers()),
        await client.get(f"{API}/payments"),
        await client.get(f"{API}/nothing-here"),
        await client.get(f"{API}/openapi.json"),
        await client.get(f"{API}/docs"),
        await client.get("/pay/unknown"),
        await post_raw(client, "/payments", b" " * (MAX_BODY_BYTES + 1), merchant.headers()),
    ]
    async with client_of(app_with(runtime, rate_limit="1/minute")) as limited:
        await limited.get(f"{API}/payments")
        responses.append(await limited.get(f"{API}/payments"))
    assert {r.status_code for r in responses} >= {200, 201, 401, 404, 413, 429}
    for response in responses:
        assert response.headers["x-content-type-options"] == "nosniff", response.request.url
