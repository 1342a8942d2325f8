"""MTN's contract fake, driven as MTN's docs tell a client to drive MTN: so that what the
connector's tests prove holds against what MTN documents (docs/OPERATORS.md)."""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.fakes.mtn_momo import MtnMomoFake
from tests.operators.mtn_live import API_KEY, API_USER, SUBSCRIPTION_KEYS, mtn_fake


class Receiver:
    """Where the fake's callbacks land: (method, body) of each, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        received = self.calls

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                received.append(("PUT", json.loads(self.rfile.read(length))))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/cb"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def wait(self, count: int, timeout: float = 5) -> None:
        deadline = time.monotonic() + timeout
        while len(self.calls) < count:
            assert time.monotonic() < deadline, self.calls
            time.sleep(0.02)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def fake() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        yield fake


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.close()


def token(fake: MtnMomoFake, product: str = "collection", **headers: str) -> httpx.Response:
    basic = base64.b64encode(f"{API_USER}:{API_KEY}".encode()).decode()
    return httpx.post(
        f"{fake.base_url}/{product}/token/",
        headers={
            "Authorization": f"Basic {basic}",
            "Ocp-Apim-Subscription-Key": SUBSCRIPTION_KEYS[product],
        }
        | headers,
    )


def headers(fake: MtnMomoFake, product: str = "collection", **extra: str) -> dict[str, str]:
    value = token(fake, product).json()["access_token"]
    return {
        "Authorization": f"Bearer {value}",
        "Ocp-Apim-Subscription-Key": SUBSCRIPTION_KEYS[product],
        "X-Target-Environment": "sandbox",
    } | extra


def request_to_pay(
    fake: MtnMomoFake, number: str = "22997123456", reference: str | None = None, **extra: str
) -> tuple[str, httpx.Response]:
    reference = reference or str(uuid.uuid4())
    body = {
        "amount": "500",
        "currency": "EUR",
        "externalId": reference,
        "payer": {"partyIdType": "MSISDN", "partyId": number},
        "payerMessage": "m",
        "payeeNote": "n",
    }
    response = httpx.post(
        f"{fake.base_url}/collection/v1_0/requesttopay",
        json=body,
        headers=headers(fake, **{"X-Reference-Id": reference} | extra),
        timeout=2,
    )
    return reference, response


def status(fake: MtnMomoFake, reference: str) -> httpx.Response:
    return httpx.get(
        f"{fake.base_url}/collection/v1_0/requesttopay/{reference}", headers=headers(fake)
    )


def test_tokens_and_their_refusals(fake: MtnMomoFake) -> None:
    issued = token(fake).json()
    assert issued["token_type"] == "access_token" and issued["expires_in"] == 3600
    wrong_key = token(fake, **{"Ocp-Apim-Subscription-Key": "nope"})
    assert wrong_key.status_code == 401 and wrong_key.json()["statusCode"] == 401
    assert token(fake, Authorization="Basic bm8=").json() == {"error": "login_failed"}
    fake.token_ttl = 1
    stale = headers(fake)
    time.sleep(1.1)
    reference = str(uuid.uuid4())
    answer = httpx.get(f"{fake.base_url}/collection/v1_0/requesttopay/{reference}", headers=stale)
    assert answer.status_code == 401


def test_a_request_to_pay_its_status_and_the_documented_refusals(fake: MtnMomoFake) -> None:
    reference, accepted = request_to_pay(fake)
    assert (accepted.status_code, accepted.content) == (202, b"")
    shown = status(fake, reference).json()
    assert shown["status"] == "SUCCESSFUL" and shown["financialTransactionId"]
    assert shown["payer"]["partyId"] == "22997123456"
    assert request_to_pay(fake, reference=reference)[1].json()["code"] == "RESOURCE_ALREADY_EXIST"
    assert status(fake, str(uuid.uuid4())).json()["code"] == "RESOURCE_NOT_FOUND"
    assert request_to_pay(fake, reference="not-a-uuid")[1].status_code == 400
    wrong_environment = request_to_pay(fake, **{"X-Target-Environment": "mtnbenin"})[1]
    assert wrong_environment.status_code == 403


@pytest.mark.parametrize(
    ("number", "state", "reason"),
    [
        ("46733123450", "FAILED", "INTERNAL_PROCESSING_ERROR"),
        ("46733123451", "FAILED", "APPROVAL_REJECTED"),
        ("46733123452", "FAILED", "EXPIRED"),
        ("46733123453", "SUCCESSFUL", None),
        ("46733123454", "PENDING", None),
    ],
)
def test_the_sandbox_numbers(fake: MtnMomoFake, number: str, state: str, reason: str) -> None:
    reference, _ = request_to_pay(fake, number)
    shown = status(fake, reference).json()
    assert shown["status"] == state
    assert (shown.get("reason") or {}).get("code") == reason


def test_the_reason_as_a_string_and_a_decision_held_for_the_test(fake: MtnMomoFake) -> None:
    fake.reason_shape, fake.hold = "string", True
    reference, _ = request_to_pay(fake)
    assert status(fake, reference).json()["status"] == "PENDING"
    fake.settle(reference, "FAILED", "APPROVAL_REJECTED")
    assert status(fake, reference).json()["reason"] == "APPROVAL_REJECTED"


def test_a_refund_needs_a_successful_collection(fake: MtnMomoFake) -> None:
    def refund(of: str) -> httpx.Response:
        body = {"amount": "500", "currency": "EUR", "externalId": "r", "referenceIdToRefund": of}
        extra = {"X-Reference-Id": str(uuid.uuid4())}
        return httpx.post(
            f"{fake.base_url}/disbursement/v1_0/refund",
            json=body,
            headers=headers(fake, "disbursement", **extra),
        )

    paid, _ = request_to_pay(fake)
    assert refund(paid).status_code == 202
    assert refund(str(uuid.uuid4())).json()["code"] == "RESOURCE_NOT_FOUND"


@pytest.mark.parametrize(
    ("mode", "expected"), [("send", 1), ("drop", 0), ("duplicate", 2), ("delay", 1)]
)
def test_callback_modes(fake: MtnMomoFake, receiver: Receiver, mode: str, expected: int) -> None:
    fake.callback_mode, fake.callback_delay = mode, 0.3
    started = time.monotonic()
    reference, _ = request_to_pay(fake, **{"X-Callback-Url": receiver.url})
    receiver.wait(expected)
    time.sleep(0.4)
    assert len(receiver.calls) == expected
    for method, body in receiver.calls:
        assert method == "PUT" and body["externalId"] == reference
        assert body["status"] == "SUCCESSFUL"
    if mode == "delay":
        assert time.monotonic() - started >= 0.3


def test_a_reordered_callback_comes_after_the_next_one(
    fake: MtnMomoFake, receiver: Receiver
) -> None:
    fake.callback_mode = "reorder"
    first, _ = request_to_pay(fake, **{"X-Callback-Url": receiver.url})
    time.sleep(0.2)
    assert receiver.calls == []
    second, _ = request_to_pay(fake, **{"X-Callback-Url": receiver.url})
    receiver.wait(2)
    assert [body["externalId"] for _, body in receiver.calls] == [second, first]


@pytest.mark.parametrize(
    ("fault", "recorded"),
    [
        ("error_500", False),
        ("error_500_after_accept", True),
        ("reset_after_accept", True),
        ("hang_after_accept", True),
        ("hang", False),
    ],
)
def test_faults(fake: MtnMomoFake, fault: str, recorded: bool) -> None:
    fake.fault(fault)
    reference = str(uuid.uuid4())
    try:
        _, answer = request_to_pay(fake, reference=reference)
        assert answer.status_code == 500
    except httpx.HTTPError:
        assert fault != "error_500" and fault != "error_500_after_accept"
    assert (reference in fake.transactions) is recorded


def test_status_queries_are_rate_limited(fake: MtnMomoFake) -> None:
    reference, _ = request_to_pay(fake)
    fake.status_rate_limit = 2
    codes = [status(fake, reference).status_code for _ in range(4)]
    assert codes[:2] == [200, 200] and 429 in codes[2:]
