"""Issue 8: a table of bad inputs through every operation of the OpenAPI document (and the
hosted page, which the document leaves out). No answer is a 5xx; every refusal is the spec's
envelope. On main this table found 49 server errors: NUL bytes, page and date overflow."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx

from cauri.runtime import Runtime
from tests.foundation.builders import API
from tests.support import make_merchant

PATH_VALUES = [
    "%00",
    "ab%00cd",
    "x" * 3000,
    "%ff%fe",
    "%ED%A0%80",  # an encoded surrogate
    "00000000-0000-0000-0000-000000000000",
    "-1",
    "9" * 40,
    "%20",
    "%2e%2e",
    "null",
    "é",
]

QUERY_VALUES = [
    "%00",
    "x%00",
    "",
    "-1",
    "0",
    "1000001",
    "9" * 40,
    "1e400",
    "9999-12-31",
    "9999-12-31T23:59:59.999999",
    "0001-01-01T00:00:00%2B01:00",
    "2026-13-45",
    "x" * 3000,
    "%ff",
    "%ED%A0%80",
    "true",
]

FIELD_VALUES: list[Any] = [
    "\x00",
    "a\x00b",
    "\ud800",
    "x" * 5000,
    "1000",
    "",
    1e300,
    -1,
    0,
    10**30,
    True,
    None,
    [],
    {},
    {"nested": "\x00"},
    [1, "\x00"],
]

RAW_BODIES = [
    b"",
    b"null",
    b"[]",
    b"42",
    b'"text"',
    b"not json",
    b"{",
    b"\xff\xfe\x00",
    b'{"a": 1, "a": 2}',
    b'{"amount": NaN}',
    b'{"amount": -Infinity}',
    b'{"amount": 1000.00000000000001}',
    b'{"amount": 1' + b"0" * 5000 + b"}",
    b'{"amount": 1e999999999}',
    b'{"x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"x": ' + b'{"y": ' * 100 + b"1" + b"}" * 100 + b"}",
    b'{"\\u0000": 1}',
    b'{"metadata": {"\\ud800": "\\udfff"}}',
]


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in {"get", "post", "put", "patch", "delete"}:
                yield method.upper(), path, operation


def body_properties(document: dict[str, Any], operation: dict[str, Any]) -> list[str]:
    content = operation.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema", {})
    for option in [schema, *schema.get("anyOf", [])]:
        if "$ref" in option:
            name = option["$ref"].rsplit("/", 1)[-1]
            return list(document["components"]["schemas"][name].get("properties", {}))
    return []


def fill(path: str, value: str) -> str:
    return re.sub(r"\{[^}]+\}", value, path)


def query_names(operation: dict[str, Any]) -> list[str]:
    return [p["name"] for p in operation.get("parameters", []) if p["in"] == "query"]


def requests_for(
    document: dict[str, Any], method: str, path: str, operation: dict[str, Any]
) -> Iterator[tuple[str, str, bytes | None]]:
    sane = fill(path, "00000000-0000-0000-0000-000000000000")
    for value in PATH_VALUES:
        yield method, fill(path, value), None
    for name in query_names(operation):
        for value in QUERY_VALUES:
            yield method, f"{sane}?{name}={value}", None
    if method in {"POST", "PUT", "PATCH"}:
        for raw in RAW_BODIES:
            yield method, sane, raw
        for field in body_properties(document, operation):
            for bad in FIELD_VALUES:
                yield method, sane, json.dumps({field: bad}).encode()


def assert_no_server_error(response: httpx.Response) -> None:
    label = f"{response.request.method} {str(response.request.url)[:200]}"
    assert response.status_code < 500, f"{label}: {response.text[:500]}"
    assert response.headers["x-content-type-options"] == "nosniff", label
    if response.status_code >= 400 and not response.headers["content-type"].startswith("text/html"):
        body = response.json()
        assert set(body) == {"success", "error"}, label
        assert body["success"] is False, label
        assert set(body["error"]) <= {"code", "message", "details"}, label
        assert isinstance(body["error"]["code"], str) and body["error"]["message"], label


async def test_every_documented_operation_survives_bad_input(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    headers = merchant.headers() | {"Content-Type": "application/json"}
    document = (await client.get(f"{API}/openapi.json")).json()
    sent = 0
    for method, path, operation in operations(document):
        for verb, url, body in requests_for(document, method, path, operation):
            assert_no_server_error(await client.request(verb, url, content=body, headers=headers))
            sent += 1
    assert len(list(operations(document))) >= 20
    assert sent > 1000


async def test_the_hosted_page_survives_bad_input(client: httpx.AsyncClient) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for value in PATH_VALUES:
        assert_no_server_error(await client.get(f"/pay/{value}"))
        for body in (b"outcome=succeeded", b"outcome=%00", b"outcome=x&outcome=y", b"\xff"):
            assert_no_server_error(await client.post(f"/pay/{value}", content=body, headers=form))
