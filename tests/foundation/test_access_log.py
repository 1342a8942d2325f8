"""Issue 12, operability: one access log line per request, with its method, its route's
template (never the path: references are in it), its status, its duration and its request
id, and nothing else of it: no query string, no header, no key, no phone number."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import LogCapture

from cauri.payments.service import payments
from cauri.runtime import Runtime
from tests.foundation.builders import API, app_with, client_of
from tests.support import make_merchant, momo_body

PHONE = "22997314159"
FIELDS = {"event", "log_level", "method", "route", "status", "duration_ms", "request_id"}


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


def access_lines(logs: LogCapture) -> list[dict[str, Any]]:
    return [entry for entry in logs.entries if entry["event"] == "http.request"]


async def test_one_line_per_request_with_its_route_template(
    runtime: Runtime, logs: LogCapture
) -> None:
    merchant = await make_merchant(runtime)
    async with client_of(app_with(runtime)) as client:
        created = await client.post(
            f"{API}/payments", json=momo_body(phone_number=PHONE), headers=merchant.headers()
        )
        reference = created.json()["data"]["reference"]
        shown = await client.get(
            f"{API}/payments/{reference}?token=query-secret-value", headers=merchant.headers()
        )
        unknown = await client.get(f"{API}/nothing/{reference}")
    lines = access_lines(logs)
    # (An unknown query parameter may be refused: the line says what was answered.)
    assert [(line["method"], line["route"], line["status"]) for line in lines] == [
        ("POST", f"{API}/payments", 201),
        ("GET", f"{API}/payments/{{reference}}", shown.status_code),
        ("GET", "unmatched", 404),
    ]
    responses = (created, shown, unknown)
    for line, response in zip(lines, responses, strict=True):
        assert set(line) == FIELDS
        assert line["request_id"] == response.headers["x-request-id"]
        assert line["log_level"] == "info"
        assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    said = repr(lines)
    for never in (reference, PHONE, merchant.test_key, "query-secret-value", "token"):
        assert never not in said


async def test_refusals_and_crashes_are_logged_too(
    runtime: Runtime, logs: LogCapture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def crash(*_: object, **__: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(payments, "get", crash)
    merchant = await make_merchant(runtime)
    async with client_of(app_with(runtime, rate_limit="2/minute")) as client:
        crashed = await client.get(f"{API}/payments/pay_x", headers=merchant.headers())
        await client.get(f"{API}/payments", headers={"Authorization": "Bearer sk_test_nope"})
        limited = await client.get(f"{API}/payments/pay_y", headers=merchant.headers())
    assert (crashed.status_code, limited.status_code) == (500, 429)
    lines = access_lines(logs)
    assert [(line["route"], line["status"]) for line in lines] == [
        # The refused request is named by the route it was meant for.
        (f"{API}/payments/{{reference}}", 500),
        (f"{API}/payments", 401),
        (f"{API}/payments/{{reference}}", 429),
    ]
    assert lines[0]["request_id"] == crashed.headers["x-request-id"]
    assert "sk_test_nope" not in repr(lines)


def test_a_log_written_to_a_file_has_no_colour_codes(tmp_path: Path) -> None:
    """Issue 27, friction 5: `serve`'s console lines, sent to a file, are plain text."""
    probe = (
        "import logging, structlog\n"
        "from cauri.kit.logging import configure\n"
        "configure(False)\n"
        "structlog.get_logger('cauri.test').warning('test.line', status=500)\n"
        "logging.getLogger('uvicorn.error').warning('a library line')\n"
    )
    written = tmp_path / "serve.log"
    with written.open("w") as output:
        subprocess.run([sys.executable, "-c", probe], stdout=output, stderr=output, check=True)
    text = written.read_text()
    assert "test.line" in text and "a library line" in text
    assert "\x1b[" not in text
