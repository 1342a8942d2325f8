"""Wave's contract fake, driven as Wave's docs tell a client to drive Wave (plain httpx, no Cauri
code): so that what the connector's tests prove holds against what Wave documents
(docs/research/wave.md)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.fakes.wave import WaveFake

API_KEY = "wave_sn_prod_" + "YhUNb9dTestKeyOfTheFakeWallet0i4bA6"
WEBHOOK_SECRET = "wave_sn_WHS_xz4m6g8rjs9bshxy05xj4khcvjv7j3hcp4fbpvv6met0zdrjvezg"
NUMBER = "+221761110001"
SESSION = {
    "amount": "1000",
    "currency": "XOF",
    "success_url": "https://shop.example/success",
    "error_url": "https://shop.example/error",
    "client_reference": "order-42",
}


def verify(header: str, raw: bytes, secrets: list[str], tolerance: int = 300) -> bool:
    """A receiver's check, as Wave's webhook docs describe it: split `t=` and the `v1=`
    values, HMAC-SHA256 of the timestamp followed by the raw body, keyed with the secret."""
    parts = [p.partition("=") for p in header.split(",")]
    stamps = [v for k, _, v in parts if k == "t"]
    signatures = [v for k, _, v in parts if k == "v1"]
    if len(stamps) != 1 or not signatures or abs(time.time() - int(stamps[0])) > tolerance:
        return False
    expected = [
        hmac.new(s.encode(), stamps[0].encode() + raw, hashlib.sha256).hexdigest() for s in secrets
    ]
    return any(hmac.compare_digest(e, s) for e in expected for s in signatures)


def eventually(condition: Callable[[], bool], timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.02)


class Receiver:
    """The business's webhook endpoint: checks each delivery with `secrets`, keeps
    (headers, raw body) of those it accepts, answers `answers` in turn (then 200)."""

    def __init__(self, secrets: list[str] | None = None, shared: bool = False) -> None:
        self.secrets = secrets or [WEBHOOK_SECRET]
        self.accepted: list[tuple[dict[str, str], bytes]] = []
        self.refused = 0
        self.answers: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                if shared:
                    ok = headers.get("authorization") == f"Bearer {receiver.secrets[0]}"
                else:
                    ok = verify(headers.get("wave-signature", ""), raw, receiver.secrets)
                status = 401
                if ok:
                    status = receiver.answers.pop(0) if receiver.answers else 200
                    if status == 200:
                        receiver.accepted.append((headers, raw))
                else:
                    receiver.refused += 1
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/webhooks/wave"
        serve = self._server.serve_forever
        threading.Thread(target=serve, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(raw) for _, raw in self.accepted]

    def wait(self, count: int, timeout: float = 5) -> None:
        deadline = time.monotonic() + timeout
        while len(self.accepted) < count:
            assert time.monotonic() < deadline, self.accepted
            time.sleep(0.02)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.close()


@pytest.fixture
def fake(receiver: Receiver) -> Iterator[WaveFake]:
    with WaveFake(API_KEY, webhook_secret=WEBHOOK_SECRET, webhook_url=receiver.url) as fake:
        yield fake


def call(
    fake: WaveFake,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    key: str = API_KEY,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    sent = {"Authorization": f"Bearer {key}"} | (headers or {})
    return httpx.request(method, fake.base_url + path, json=body, headers=sent, timeout=2)


def checkout(fake: WaveFake, **changes: Any) -> httpx.Response:
    return call(fake, "POST", "/v1/checkout/sessions", SESSION | changes)


def payout(
    fake: WaveFake, key: str | None = None, mobile: str = NUMBER, **changes: Any
) -> httpx.Response:
    body = {
        "currency": "XOF",
        "receive_amount": "5000",
        "mobile": mobile,
        "name": "Fatou Ndiaye",
        "client_reference": "payout-7",
    } | changes
    extra = {"Idempotency-Key": key or str(uuid.uuid4())}
    return call(fake, "POST", "/v1/payout", body, headers=extra)


def test_authentication_refusals(fake: WaveFake) -> None:
    url = fake.base_url + "/v1/balance"
    assert httpx.get(url).json()["code"] == "missing-auth-header"
    assert httpx.get(url, headers={"Authorization": "Basic eDp5"}).json()["code"] == "invalid-auth"
    empty = httpx.get(url, headers={"Authorization": "Bearer"})
    assert (empty.status_code, empty.json()["code"]) == (401, "api-key-not-provided")
    unknown = call(fake, "GET", "/v1/balance", key="wave_sn_prod_nope")
    assert (unknown.status_code, unknown.json()["code"]) == (401, "no-matching-api-key")
    assert set(unknown.json()) == {"code", "message"}
    fake.add_key("wave_sn_prod_checkoutonly", ["checkout_api"])
    denied = call(fake, "GET", "/v1/balance", key="wave_sn_prod_checkoutonly")
    assert (denied.status_code, denied.json()["code"]) == (403, "invalid-wallet")
    assert checkout(fake).status_code == 200
    fake.revoke()
    revoked = call(fake, "GET", "/v1/balance")
    assert (revoked.status_code, revoked.json()["code"]) == (401, "api-key-revoked")


def test_a_disabled_wallet_may_still_read_its_balance(fake: WaveFake) -> None:
    fake.wallet_disabled = True
    assert call(fake, "GET", "/v1/balance").json() == {"amount": "1000000", "currency": "XOF"}
    refused = checkout(fake)
    assert (refused.status_code, refused.json()["code"]) == (403, "disabled-wallet")


def test_a_checkout_session_and_its_lookups(fake: WaveFake) -> None:
    created = checkout(fake, restrict_payer_mobile=NUMBER)
    assert created.status_code == 200
    session = created.json()
    assert session["id"].startswith("cos-")
    assert session["wave_launch_url"] == f"https://pay.wave.com/c/{session['id']}"
    assert (session["checkout_status"], session["payment_status"]) == ("open", "processing")
    assert (session["amount"], session["currency"]) == ("1000", "XOF")
    assert session["client_reference"] == "order-42"
    assert session["restrict_payer_mobile"] == NUMBER
    assert "transaction_id" not in session and session["when_expires"] > session["when_created"]
    got = call(fake, "GET", f"/v1/checkout/sessions/{session['id']}").json()
    assert got == session
    found = call(fake, "GET", "/v1/checkout/sessions/search?client_reference=order-42").json()
    assert [s["id"] for s in found["result"]] == [session["id"]]
    none = call(fake, "GET", "/v1/checkout/sessions/search?client_reference=nothing").json()
    assert none == {"result": []}
    paid = fake.pay(session["id"])
    by_transaction = call(
        fake, "GET", f"/v1/checkout/sessions?transaction_id={paid['transaction_id']}"
    ).json()
    assert by_transaction["id"] == session["id"]
    assert by_transaction["payment_status"] == "succeeded"
    missing = call(fake, "GET", "/v1/checkout/sessions/cos-doesnotexist")
    assert (missing.status_code, missing.json()["code"]) == (404, "checkout-session-not-found")


@pytest.mark.parametrize(
    ("changes", "loc"),
    [
        ({"amount": "1000.50"}, "amount"),  # XOF has no decimals
        ({"amount": 1000}, "amount"),  # amounts are strings
        ({"amount": "0100"}, "amount"),
        ({"amount": "0"}, "amount"),
        ({"success_url": "http://shop.example/ok"}, "success_url"),
        ({"restrict_payer_mobile": "761110001"}, "restrict_payer_mobile"),
        ({"client_reference": "x" * 256}, "client_reference"),
        ({"currency": "xof"}, "currency"),
    ],
)
def test_checkout_validation(fake: WaveFake, changes: dict[str, Any], loc: str) -> None:
    refused = checkout(fake, **changes)
    assert refused.status_code == 400
    body = refused.json()
    assert body["code"] == "request-validation-error" and body["details"][0]["loc"] == [loc]
    missing = call(fake, "POST", "/v1/checkout/sessions", {"amount": "1000", "currency": "XOF"})
    assert missing.json()["details"][0]["msg"] == "field required"
    assert fake.sessions == {}


def test_paying_completes_the_session_and_signs_the_event(
    fake: WaveFake, receiver: Receiver
) -> None:
    session = checkout(fake).json()
    fake.pay(session["id"])
    receiver.wait(1)
    headers, raw = receiver.accepted[0]
    event = json.loads(raw)
    assert set(event) == {"id", "type", "data"} and event["id"].startswith("EV_")
    assert event["type"] == "checkout.session.completed"
    data = event["data"]
    assert (data["id"], data["checkout_status"], data["payment_status"]) == (
        session["id"],
        "complete",
        "succeeded",
    )
    assert data["transaction_id"].startswith("T_") and data["when_completed"]
    stamp, signature = headers["wave-signature"].split(",")
    digest = hmac.new(
        WEBHOOK_SECRET.encode(), stamp.removeprefix("t=").encode() + raw, hashlib.sha256
    ).hexdigest()
    assert signature == f"v1={digest}"
    assert abs(int(stamp.removeprefix("t=")) - time.time()) < 5
    with pytest.raises(ValueError):
        fake.pay(session["id"])


def test_a_failed_attempt_leaves_the_session_open(fake: WaveFake, receiver: Receiver) -> None:
    session = checkout(fake).json()
    fake.fail_payment(session["id"], "insufficient-funds")
    receiver.wait(1)
    event = receiver.events[0]
    assert event["type"] == "checkout.session.payment_failed"
    assert event["data"]["last_payment_error"]["code"] == "insufficient-funds"
    shown = call(fake, "GET", f"/v1/checkout/sessions/{session['id']}").json()
    assert (shown["checkout_status"], shown["payment_status"]) == ("open", "processing")
    assert set(shown["last_payment_error"]) == {"code", "message"}
    fake.pay(session["id"])  # the customer tries again
    receiver.wait(2)
    assert receiver.events[1]["type"] == "checkout.session.completed"


def test_expiry_by_request_by_time_and_by_the_test(fake: WaveFake, receiver: Receiver) -> None:
    first = checkout(fake).json()["id"]
    expired = call(fake, "POST", f"/v1/checkout/sessions/{first}/expire")
    assert (expired.status_code, expired.content) == (200, b"")
    shown = call(fake, "GET", f"/v1/checkout/sessions/{first}").json()
    assert (shown["checkout_status"], shown["payment_status"]) == ("expired", "cancelled")
    assert shown["when_completed"]
    again = call(fake, "POST", f"/v1/checkout/sessions/{first}/expire")
    assert again.status_code == 409
    paid = checkout(fake).json()["id"]
    fake.pay(paid)
    assert call(fake, "POST", f"/v1/checkout/sessions/{paid}/expire").status_code == 409
    unknown = call(fake, "POST", "/v1/checkout/sessions/cos-nope/expire")
    assert unknown.status_code == 404
    timed = checkout(fake).json()["id"]
    fake.advance(fake.session_ttl + 1)
    assert call(fake, "GET", f"/v1/checkout/sessions/{timed}").json()["checkout_status"] == (
        "expired"
    )
    steered = checkout(fake).json()["id"]
    fake.expire(steered)
    with pytest.raises(ValueError):
        fake.pay(steered)
    assert len(fake.posts("expire")) == 4
    receiver.wait(1)
    assert [e["type"] for e in receiver.events] == ["checkout.session.completed"]


def test_refunds(fake: WaveFake) -> None:
    session = checkout(fake, amount="10000").json()["id"]
    unpaid = call(fake, "POST", f"/v1/checkout/sessions/{session}/refund")
    assert (unpaid.status_code, unpaid.json()["code"]) == (400, "checkout-refund-failed")
    fake.pay(session)
    assert call(fake, "GET", "/v1/balance").json()["amount"] == "1009900"  # 1% fee kept
    refunded = call(fake, "POST", f"/v1/checkout/sessions/{session}/refund")
    assert (refunded.status_code, refunded.content) == (200, b"")
    assert call(fake, "POST", f"/v1/checkout/sessions/{session}/refund").status_code == 200
    assert call(fake, "GET", "/v1/balance").json()["amount"] == "999900"  # once, fee included
    assert len(fake.posts("refund")) == 3
    other = checkout(fake).json()["id"]
    fake.pay(other)
    fake.refuse_refund(other)
    assert call(fake, "POST", f"/v1/checkout/sessions/{other}/refund").status_code == 400
    missing = call(fake, "POST", "/v1/checkout/sessions/cos-nope/refund")
    assert missing.json()["code"] == "checkout-session-not-found"


def test_a_payout_is_synchronous_and_idempotent(fake: WaveFake) -> None:
    key = str(uuid.uuid4())
    sent = payout(fake, key, payment_reason="Salary")
    assert sent.status_code == 200
    shown = sent.json()
    assert shown["id"].startswith("pt-") and shown["status"] == "succeeded"
    assert (shown["receive_amount"], shown["fee"], shown["currency"]) == ("5000", "50", "XOF")
    assert shown["mobile"] == NUMBER and shown["payment_reason"] == "Salary"
    assert "payout_error" not in shown and shown["timestamp"].endswith("Z")
    again = payout(fake, key, payment_reason="Salary")
    assert again.json() == shown
    assert len(fake.payouts) == 1 and len(fake.posts("payout")) == 2
    assert call(fake, "GET", "/v1/balance").json()["amount"] == "994950"
    other_body = payout(fake, key, receive_amount="6000")
    assert (other_body.status_code, other_body.json()["code"]) == (409, "idempotency-mismatch")
    no_key = call(fake, "POST", "/v1/payout", {"currency": "XOF", "receive_amount": "1"})
    assert (no_key.status_code, no_key.json()["code"]) == (400, "request-validation-error")
    assert call(fake, "GET", f"/v1/payout/{shown['id']}").json() == shown
    found = call(fake, "GET", "/v1/payouts/search?client_reference=payout-7").json()
    assert [p["id"] for p in found["result"]] == [shown["id"]]
    missing = call(fake, "GET", "/v1/payout/pt-nope")
    assert (missing.status_code, missing.json()["code"]) == (404, "not-found")


def test_payout_pre_checks_answer_at_top_level(fake: WaveFake) -> None:
    def code(response: httpx.Response) -> tuple[int, str]:
        return response.status_code, response.json()["code"]

    assert code(payout(fake, currency="XAF")) == (400, "currency-mismatch")
    assert code(payout(fake, mobile="+2250700000000")) == (400, "country-mismatch")
    assert code(payout(fake, mobile="761110001")) == (400, "request-validation-error")
    assert code(payout(fake, receive_amount="10.5")) == (400, "request-validation-error")
    assert code(payout(fake, payment_reason="x" * 41)) == (400, "request-validation-error")
    assert code(payout(fake, aggregated_merchant_id="am-x")) == (
        400,
        "invalid-aggregated-merchant-id",
    )
    not_json = httpx.post(
        fake.base_url + "/v1/payout",
        content=b"currency=XOF",
        headers={"Authorization": f"Bearer {API_KEY}", "Idempotency-Key": "k"},
    )
    assert code(not_json) == (400, "request-not-json")
    broken = httpx.post(
        fake.base_url + "/v1/payout",
        content=b'{"currency": ',
        headers={
            "Authorization": f"Bearer {API_KEY}",
            "Idempotency-Key": "k",
            "Content-Type": "application/json",
        },
    )
    assert code(broken) == (400, "request-parsing-error")
    assert fake.payouts == {}


def test_payout_outcomes_per_number_hold_and_settle(fake: WaveFake) -> None:
    fake.outcome_for("+221770000001", "failed", "recipient-limit-exceeded")
    failed = payout(fake, mobile="+221770000001").json()
    assert failed["status"] == "failed"
    assert failed["payout_error"] == {
        "error_code": "recipient-limit-exceeded",
        "error_message": "The recipient has reached their monthly limit.",
    }
    assert call(fake, "GET", "/v1/balance").json()["amount"] == "1000000"  # nothing left
    fake.outcome_for("+221770000002", "processing")
    pending = payout(fake, mobile="+221770000002").json()
    assert pending["status"] == "processing"
    fake.settle_payout(pending["id"], "succeeded")
    assert call(fake, "GET", f"/v1/payout/{pending['id']}").json()["status"] == "succeeded"
    fake.hold = True
    held = payout(fake).json()
    assert held["status"] == "processing"
    fake.settle_payout(held["id"], "failed", "recipient-account-blocked")
    shown = call(fake, "GET", f"/v1/payout/{held['id']}").json()
    assert shown["payout_error"]["error_code"] == "recipient-account-blocked"


def test_insufficient_funds_as_a_failed_payout_or_as_an_error(fake: WaveFake) -> None:
    fake.balance = Decimal("5000")  # 5000 + 50 of fee is more
    key = str(uuid.uuid4())
    failed = payout(fake, key).json()
    assert failed["status"] == "failed"
    assert failed["payout_error"]["error_code"] == "insufficient-funds"
    assert payout(fake, key).json()["id"] == failed["id"]  # the key is spent on it
    fake.insufficient_funds_as = "error"
    refused = payout(fake)
    assert (refused.status_code, refused.json()["code"]) == (422, "insufficient-funds")
    assert len(fake.payouts) == 1


def test_reversals(fake: WaveFake) -> None:
    sent = payout(fake).json()
    assert call(fake, "GET", "/v1/balance").json()["amount"] == "994950"
    reversed_ = call(fake, "POST", f"/v1/payout/{sent['id']}/reverse")
    assert (reversed_.status_code, reversed_.content) == (200, b"")
    assert call(fake, "POST", f"/v1/payout/{sent['id']}/reverse").status_code == 200
    assert call(fake, "GET", f"/v1/payout/{sent['id']}").json()["status"] == "reversed"
    assert call(fake, "GET", "/v1/balance").json()["amount"] == "1000000"  # fee included
    refused = payout(fake).json()
    fake.refuse_reversal(refused["id"], "payout-reversal-account-terminated")
    answer = call(fake, "POST", f"/v1/payout/{refused['id']}/reverse")
    assert answer.json()["code"] == "payout-reversal-account-terminated"
    old = payout(fake).json()
    fake.advance(3 * 24 * 3600 + 1)
    late = call(fake, "POST", f"/v1/payout/{old['id']}/reverse")
    assert late.json()["code"] == "payout-reversal-time-limit-exceeded"
    missing = call(fake, "POST", "/v1/payout/pt-nope/reverse")
    assert (missing.status_code, missing.json()["code"]) == (404, "not-found")
    assert len(fake.posts("reverse")) == 5


@pytest.mark.parametrize(
    ("mode", "expected"), [("send", 1), ("drop", 0), ("duplicate", 2), ("delay", 1)]
)
def test_webhook_modes(fake: WaveFake, receiver: Receiver, mode: str, expected: int) -> None:
    fake.webhook_mode, fake.webhook_delay = mode, 0.3
    started = time.monotonic()
    session = checkout(fake).json()["id"]
    fake.pay(session)
    receiver.wait(expected)
    time.sleep(0.4)
    assert len(receiver.events) == expected
    assert len({e["id"] for e in receiver.events}) == min(expected, 1)
    if mode == "delay":
        assert time.monotonic() - started >= 0.3


def test_a_reordered_event_comes_after_the_next_one(fake: WaveFake, receiver: Receiver) -> None:
    fake.webhook_mode = "reorder"
    first, second = checkout(fake).json()["id"], checkout(fake).json()["id"]
    fake.pay(first)
    time.sleep(0.2)
    assert receiver.accepted == []
    fake.pay(second)
    receiver.wait(2)
    assert [e["data"]["id"] for e in receiver.events] == [second, first]


def test_deliveries_are_retried_until_acknowledged(fake: WaveFake, receiver: Receiver) -> None:
    fake.webhook_retry_delays = (0.05, 0.05, 0.05)
    receiver.answers = [500, 503]
    fake.pay(checkout(fake).json()["id"])
    eventually(lambda: len(fake.deliveries) == 3)
    assert [d.status for d in fake.deliveries] == [500, 503, 200]
    assert [d.attempt for d in fake.deliveries] == [1, 2, 3]
    receiver.answers = [500] * 4
    fake.pay(checkout(fake).json()["id"])
    eventually(lambda: len(fake.deliveries) == 7)
    time.sleep(0.2)
    assert len(fake.deliveries) == 7  # gives up after the last re-send
    assert len(receiver.accepted) == 1


def test_secret_rotation_signs_with_each_secret(receiver: Receiver) -> None:
    new = "wave_sn_WHS_" + "n" * 52
    receiver.secrets = [new]
    with WaveFake(API_KEY, webhook_secret=WEBHOOK_SECRET, webhook_url=receiver.url) as fake:
        fake.webhook_secrets = [WEBHOOK_SECRET, new]
        fake.pay(checkout(fake).json()["id"])
        receiver.wait(1)
        header = receiver.accepted[0][0]["wave-signature"]
        assert header.count("v1=") == 2
        assert verify(header, receiver.accepted[0][1], [WEBHOOK_SECRET])


def test_the_shared_secret_strategy() -> None:
    receiver = Receiver(shared=True)
    try:
        with WaveFake(API_KEY, webhook_secret=WEBHOOK_SECRET, webhook_url=receiver.url) as fake:
            fake.webhook_auth = "shared_secret"
            fake.pay(checkout(fake).json()["id"])
            receiver.wait(1)
            headers = receiver.accepted[0][0]
            assert headers["authorization"] == f"Bearer {WEBHOOK_SECRET}"
            assert "wave-signature" not in headers
            assert fake.send_forged_webhook({"id": "EV_x", "type": "t", "data": {}}) == 401
            assert fake.send_forged_webhook({}, secret=WEBHOOK_SECRET) == 200
    finally:
        receiver.close()


def test_forged_webhooks(fake: WaveFake, receiver: Receiver) -> None:
    event = {"id": "EV_forged", "type": "checkout.session.completed", "data": {"id": "cos-x"}}
    assert fake.send_forged_webhook(event) == 401  # a secret that is not Wave's
    stale = int(time.time()) - 3600
    assert fake.send_forged_webhook(event, secret=WEBHOOK_SECRET, timestamp=stale) == 401
    assert fake.send_forged_webhook(event, signed=False) == 401
    assert receiver.refused == 3
    assert fake.send_forged_webhook(event, secret=WEBHOOK_SECRET) == 200  # the control


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
def test_faults(fake: WaveFake, fault: str, recorded: bool) -> None:
    fake.fault(fault, path="/v1/payout")
    key = str(uuid.uuid4())
    try:
        answer = payout(fake, key)
        assert (answer.status_code, answer.json()["code"]) == (500, "internal-server-error")
    except httpx.HTTPError:
        assert fault not in ("error_500", "error_500_after_accept")
    assert (len(fake.payouts) == 1) is recorded
    retried = payout(fake, key)  # a retry with the same key: one payout, never two
    assert retried.status_code == 200 and len(fake.payouts) == 1


def test_rate_limit(fake: WaveFake) -> None:
    fake.fault("rate_limit", times=2)
    first = call(fake, "GET", "/v1/balance")
    assert (first.status_code, first.json()["code"]) == (429, "too-many-requests")
    assert checkout(fake).status_code == 429
    assert call(fake, "GET", "/v1/balance").status_code == 200


def test_unknown_routes_and_methods(fake: WaveFake) -> None:
    assert call(fake, "GET", "/v1/nothing").status_code == 404
    assert call(fake, "GET", "/v1/payout").status_code == 405


def test_request_signing_when_enabled(fake: WaveFake) -> None:
    signing = "wave_sn_AKS_" + "s" * 40
    fake.request_signing_secret = signing
    unsigned = call(fake, "GET", "/v1/balance")
    assert (unsigned.status_code, unsigned.json()["code"]) == (401, "missing-signature")
    raw = json.dumps(SESSION).encode()
    stamp = int(time.time())
    digest = hmac.new(signing.encode(), str(stamp).encode() + raw, hashlib.sha256).hexdigest()
    signed = httpx.post(
        fake.base_url + "/v1/checkout/sessions",
        content=raw,
        headers={
            "Authorization": f"Bearer {API_KEY}",
            "Content-Type": "application/json",
            "Wave-Signature": f"t={stamp},v1={digest}",
        },
    )
    assert signed.status_code == 200
    get_digest = hmac.new(signing.encode(), str(stamp).encode(), hashlib.sha256).hexdigest()
    balance = call(
        fake, "GET", "/v1/balance", headers={"Wave-Signature": f"t={stamp},v1={get_digest}"}
    )
    assert balance.status_code == 200
    wrong = call(fake, "GET", "/v1/balance", headers={"Wave-Signature": f"t={stamp},v1={digest}"})
    assert wrong.json()["code"] == "invalid-signature"
    old = call(fake, "GET", "/v1/balance", headers={"Wave-Signature": f"t={stamp - 600},v1=00"})
    assert old.json()["code"] == "expired-signature-timestamp"
