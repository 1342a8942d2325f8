"""Issue 27: the API is documented in the repository, and the document keeps up with the code.

- Every operation of the served OpenAPI document (under /api/v1) is in docs/API.md.
- Every error code the service can answer (the `code` of each CauriError subclass) is in it.
- Every event type (cauri.events.types, the one declaration that emission enforces) is in it
  and in the OpenAPI document's event description.
- The README and the docs link nothing outside the repository (no `../shared/…`).
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from cauri.events.service import Emission
from cauri.events.types import EVENT_TYPES
from cauri.kit.errors import CauriError
from tests.foundation.builders import API

ROOT = Path(__file__).resolve().parents[2]
API_DOC = ROOT / "docs" / "API.md"
# The documents a reader of a clone follows: the README, docs/ and the client's README.
DOCUMENTS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "clients" / "python" / "README.md",
]
# The document's own pages, not operations of the API.
NOT_OPERATIONS = {f"{API}/openapi.json", f"{API}/docs"}
# A Markdown link's target: [text](target) or ![alt](target).
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@pytest.fixture
async def document(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get(f"{API}/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def api_doc() -> str:
    return API_DOC.read_text(encoding="utf-8")


def all_subclasses(cls: type[CauriError]) -> set[type[CauriError]]:
    found: set[type[CauriError]] = set()
    pending = [cls]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                pending.append(sub)
    return found


async def test_every_operation_is_documented(document: dict[str, Any]) -> None:
    text = api_doc()
    missing = []
    for path, item in document["paths"].items():
        if not path.startswith(f"{API}/") or path in NOT_OPERATIONS:
            continue
        relative = path.removeprefix(API)
        for method in item:
            # `GET /payments` must not pass for being the start of `GET /payments/{reference}`.
            named = re.escape(f"{method.upper()} {relative}") + r"(?![\w/{}-])"
            if not re.search(named, text):
                missing.append(f"{method.upper()} {relative}")
    assert not missing, f"operations missing from docs/API.md: {missing}"


def test_every_error_code_is_documented() -> None:
    # The app, as served, imports every domain that defines an error.
    import cauri.app  # noqa: F401

    text = api_doc()
    codes = {error.code for error in all_subclasses(CauriError)} | {CauriError.code}
    assert {"payment_failed", "payload_too_large", "csrf_refused"} <= codes
    missing = sorted(code for code in codes if f"`{code}`" not in text)
    assert not missing, f"error codes missing from docs/API.md: {missing}"


def test_the_error_envelope_and_its_reference_are_documented() -> None:
    text = api_doc()
    for field in ("code", "message", "details", "reference"):
        assert f"| `{field}` |" in text, field
    assert "Retry-After" in text


def test_every_event_type_is_documented() -> None:
    text = api_doc()
    missing = [type for type in EVENT_TYPES if f"`{type}`" not in text]
    assert not missing, f"event types missing from docs/API.md: {missing}"


async def test_the_openapi_event_description_lists_every_event_type(
    document: dict[str, Any],
) -> None:
    described = document["components"]["schemas"]["EventObject"]["properties"]["event"]
    missing = [type for type in EVENT_TYPES if f"`{type}`" not in described["description"]]
    assert not missing, missing


def test_an_undeclared_event_type_is_never_emitted() -> None:
    """The tuple is the declaration: emission refuses any other type, so a new event cannot
    go out undocumented (the tests above then fail until docs/API.md names it)."""
    arguments: dict[str, Any] = {
        "event_id": uuid.uuid4(),
        "merchant_id": "mer_x",
        "livemode": False,
        "data": {},
        "at": datetime(2026, 11, 28, tzinfo=UTC),
    }
    for type in EVENT_TYPES:
        assert Emission(type=type, **arguments).type == type
    with pytest.raises(ValueError, match="undeclared event type"):
        Emission(type="payment.pending", **arguments)


def test_the_readme_and_docs_link_nothing_outside_the_repository() -> None:
    outside = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        if "../shared" in text:
            outside.append(f"{path.relative_to(ROOT)}: mentions ../shared")
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue  # a web address or an anchor of the same page
            resolved = (path.parent / target.split("#", 1)[0]).resolve()
            if not resolved.is_relative_to(ROOT):
                outside.append(f"{path.relative_to(ROOT)}: {target}")
            elif not resolved.exists():
                outside.append(f"{path.relative_to(ROOT)}: {target} does not exist")
    assert not outside, outside


def test_the_readme_points_to_the_api_reference_and_the_client() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = readme[: readme.index("## Quick start")]
    assert "(docs/API.md)" in head
    assert "(clients/python/README.md)" in head
