"""Orange Money's contract fake, driven as Orange's Web Payment guide tells a client to drive
Orange (plain httpx, no Cauri code): so that what the connector's tests prove holds against what
Orange documents (docs/research/orange_money.md)."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.fakes.orange_money import OrangeMoneyFake

CLIENT_ID = "9wEq2T01mDG1guXINVTKsTestClient"
CLIENT_SECRET = "cb6d6c61TestSecretOfTheFakeApp"
MERCHANT_KEY = "a86b2087"
SUBSCRIBER = "7701100100"
JSON = {"Accept": "application/json", "Content-Type": "application/json"}


def eventually(condition: Callable[[], bool], timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.02)


class Receiver:
    """The merchant's notif_url: keeps the JSON body of each notification, in order."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/notif"
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def fake() -> Iterator[OrangeMoneyFake]:
    with OrangeMoneyFake(
        client_id=CLIENT_ID, client_secret=CLIENT_SECRET, merchant_key=MERCHANT_KEY
    ) as fake:
        yield fake


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.close()


def authorization_header(client_id: str = CLIENT_ID, secret: str = CLIENT_SECRET) -> str:
    """The "Authorization header" the Orange Developer dashboard shows for the application."""
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


def get_token(fake: OrangeMoneyFake, **headers: str) -> httpx.Response:
    return httpx.post(
        fake.token_url,
        headers={"Authorization": authorization_header(), "Accept": "application/json"} | headers,
        data={"grant_type": "client_credentials"},
    )


def bearer(fake: OrangeMoneyFake) -> dict[str, str]:
    return JSON | {"Authorization": "Bearer " + get_token(fake).json()["access_token"]}


def order(
    n: int = 1, notif_url: str = "https://shop.example/notif", **extra: Any
) -> dict[str, Any]:
    return {
        "merchant_key": MERCHANT_KEY,
        "currency": "OUV",
        "order_id": f"MY_ORDER_ID_{n:05d}",
        "amount": 1200,
        "return_url": "https://shop.example/return",
        "cancel_url": "https://shop.example/cancel",
        "notif_url": notif_url,
        "lang": "fr",
        "reference": "ref Merchant",
    } | extra


def webpayment(
    fake: OrangeMoneyFake, body: Any, headers: dict[str, str] | None = None, **kwargs: Any
) -> httpx.Response:
    return httpx.post(
        f"{fake.api_url}/webpayment", json=body, headers=headers or bearer(fake), **kwargs
    )


def status(fake: OrangeMoneyFake, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{fake.api_url}/transactionstatus", json=body, headers=bearer(fake))


def status_of(
    fake: OrangeMoneyFake, created: dict[str, Any], sent: dict[str, Any]
) -> dict[str, Any]:
    query = {"order_id": sent["order_id"], "amount": sent["amount"]}
    answer = status(fake, query | {"pay_token": created["pay_token"]})
    assert answer.status_code == 201
    shown: dict[str, Any] = answer.json()
    return shown


def test_the_access_token_and_its_refusals(fake: OrangeMoneyFake) -> None:
    issued = get_token(fake)
    assert issued.status_code == 200
    assert issued.json()["token_type"] == "Bearer" and issued.json()["expires_in"] == 3600
    assert fake.tokens_issued == 1
    wrong = get_token(fake, Authorization=authorization_header(secret="nope"))
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    garbled = get_token(fake, Authorization="Basic %%%")
    assert garbled.json()["error_description"] == "Unable to decode Basic authorization."
    other_grant = httpx.post(
        fake.token_url,
        headers={"Authorization": authorization_header()},
        data={"grant_type": "password"},
    )
    assert other_grant.status_code == 400
    assert other_grant.json()["error"] == "unsupported_grant_type"
    fake.expires_in_as = "str"
    assert get_token(fake).json()["expires_in"] == "3600"


def test_bearer_refusals_missing_unknown_and_expired(fake: OrangeMoneyFake) -> None:
    none = webpayment(fake, order(), headers=JSON)
    assert none.status_code == 401 and none.json()["code"] == 40
    unknown = webpayment(fake, order(), headers=JSON | {"Authorization": "Bearer nope"})
    assert unknown.status_code == 401 and unknown.json()["code"] == 41
    stale = bearer(fake)
    fake.advance(3601)
    expired = webpayment(fake, order(), headers=stale)
    assert expired.status_code == 401
    assert expired.json() == {
        "code": 42,
        "message": "Expired credentials",
        "description": "The requested service needs credentials, and the ones provided were "
        "out-of-date.",
    }
    assert webpayment(fake, order(), headers=bearer(fake)).status_code == 201
    held = bearer(fake)
    fake.expire_tokens()
    assert webpayment(fake, order(2), headers=held).json()["code"] == 42


def test_a_web_payment_as_in_the_guide(fake: OrangeMoneyFake) -> None:
    sent = order()
    answer = webpayment(fake, sent)
    assert answer.status_code == 201
    created = answer.json()
    assert created["status"] == 201 and created["message"] == "OK"
    assert len(created["pay_token"]) == 64 and len(created["notif_token"]) == 32
    assert created["payment_url"] == f"{fake.base_url}/payment/pay_token/{created['pay_token']}"
    shown = status_of(fake, created, sent)
    assert shown == {"status": "INITIATED", "order_id": sent["order_id"]}
    assert fake.payment(sent["order_id"]) is fake.payment(created["pay_token"])
    assert len(fake.posts("webpayment")) == 1 and len(fake.posts("transactionstatus")) == 1


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"merchant_key": None}, 23),
        ({"currency": None}, 23),
        ({"order_id": None}, 23),
        ({"amount": None}, 23),
        ({"return_url": None}, 23),
        ({"cancel_url": None}, 23),
        ({"notif_url": None}, 23),
        ({"order_id": "X" * 31}, 24),
        ({"reference": "R" * 31}, 24),
        ({"return_url": "https://shop.example/" + "r" * 100}, 24),
        ({"cancel_url": "https://shop.example/" + "c" * 100}, 24),
        ({"notif_url": "https://shop.example/" + "n" * 100}, 24),
        ({"amount": 0}, 24),
        ({"amount": 12.5}, 24),
        ({"amount": "12a"}, 24),
        ({"currency": "XOF"}, 24),
    ],
)
def test_the_documented_limits(fake: OrangeMoneyFake, change: dict[str, Any], code: int) -> None:
    body = {k: v for k, v in (order() | change).items() if v is not None}
    answer = webpayment(fake, body)
    assert answer.status_code == 400 and answer.json()["code"] == code
    assert set(answer.json()) == {"code", "message", "description"}


def test_the_limits_are_inclusive(fake: OrangeMoneyFake) -> None:
    url = "https://shop.example/" + "u" * (120 - len("https://shop.example/"))
    body = order(order_id="O" * 30, reference="R" * 30, return_url=url, notif_url=url)
    assert webpayment(fake, body).status_code == 201


def test_other_refusals_of_a_web_payment(fake: OrangeMoneyFake) -> None:
    headers = bearer(fake)
    assert webpayment(fake, order(), headers).status_code == 201
    duplicate = webpayment(fake, order(), headers)
    assert duplicate.status_code == 400 and "order_id" in duplicate.json()["description"]
    wrong_key = webpayment(fake, order(2, merchant_key="deadbeef"), headers)
    assert wrong_key.status_code == 403
    other_country = httpx.post(
        f"{fake.base_url}/orange-money-webpay/sn/v1/webpayment", json=order(3), headers=headers
    )
    assert other_country.status_code == 403 and other_country.json()["code"] == 50
    html_only = webpayment(fake, order(4), headers | {"Accept": "text/html"})
    assert html_only.status_code == 406
    garbled = httpx.post(f"{fake.api_url}/webpayment", content=b"{nope", headers=headers)
    assert garbled.status_code == 400 and garbled.json()["code"] == 22
    wrong_method = httpx.get(f"{fake.api_url}/webpayment", headers=headers)
    assert wrong_method.status_code == 405
    assert httpx.post(f"{fake.base_url}/nowhere", headers=headers).json()["code"] == 60
    assert len(fake.payments) == 1


def test_a_country_takes_its_own_currency() -> None:
    with OrangeMoneyFake(
        client_id=CLIENT_ID, client_secret=CLIENT_SECRET, merchant_key=MERCHANT_KEY, country="sn"
    ) as fake:
        assert fake.api_url.endswith("/orange-money-webpay/sn/v1")
        assert webpayment(fake, order()).json()["code"] == 24  # OUV is the dev currency
        assert webpayment(fake, order(currency="XOF")).status_code == 201


def test_the_customer_pays_on_the_page(fake: OrangeMoneyFake, receiver: Receiver) -> None:
    sent = order(notif_url=receiver.url)
    created = webpayment(fake, sent).json()
    page = httpx.get(created["payment_url"])
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert 'id="confirm"' in page.text and "1200 OUV" in page.text
    confirm = f"{fake.base_url}/payment/pay_token/{created['pay_token']}/confirm"
    incomplete = httpx.post(confirm, data={"msisdn": SUBSCRIBER})
    assert incomplete.status_code == 200
    assert fake.payment(created["pay_token"]).status == "INITIATED"
    done = httpx.post(confirm, data={"msisdn": SUBSCRIBER, "otp": "1234"})
    assert done.status_code == 302 and done.headers["location"] == sent["return_url"]
    eventually(lambda: len(receiver.bodies) == 1)
    shown = status_of(fake, created, sent)
    assert shown["status"] == "SUCCESS" and shown["txnid"].startswith("MP")
    assert receiver.bodies == [
        {"status": "SUCCESS", "notif_token": created["notif_token"], "txnid": shown["txnid"]}
    ]
    again = httpx.get(created["payment_url"])
    assert 'id="return"' in again.text and 'id="confirm"' not in again.text


def test_cancel_sends_the_customer_back_and_leaves_the_payment_initiated(
    fake: OrangeMoneyFake, receiver: Receiver
) -> None:
    sent = order(notif_url=receiver.url)
    created = webpayment(fake, sent).json()
    cancel = httpx.get(f"{fake.base_url}/payment/pay_token/{created['pay_token']}/cancel")
    assert cancel.status_code == 302 and cancel.headers["location"] == sent["cancel_url"]
    assert status_of(fake, created, sent)["status"] == "INITIATED"
    assert fake.payment(created["pay_token"]).cancelled
    time.sleep(0.2)
    assert receiver.bodies == []


def test_a_declined_payment_is_notified_failed(fake: OrangeMoneyFake, receiver: Receiver) -> None:
    fake.outcome_for("7701100199", "FAILED")
    sent = order(notif_url=receiver.url)
    created = webpayment(fake, sent).json()
    confirm = f"{fake.base_url}/payment/pay_token/{created['pay_token']}/confirm"
    page = httpx.post(confirm, data={"msisdn": "7701100199", "otp": "1234"})
    assert page.status_code == 200 and 'id="return"' in page.text
    eventually(lambda: len(receiver.bodies) == 1)
    assert receiver.bodies[0]["status"] == "FAILED"
    assert status_of(fake, created, sent)["status"] == "FAILED"


def test_steering_pay_fail_and_expire(fake: OrangeMoneyFake, receiver: Receiver) -> None:
    sent = [order(n, notif_url=receiver.url) for n in (1, 2, 3)]
    created = [webpayment(fake, s).json() for s in sent]
    fake.pay(created[0]["pay_token"])
    fake.fail(created[1]["pay_token"])
    fake.expire(created[2]["pay_token"])
    shown = [status_of(fake, c, s)["status"] for c, s in zip(created, sent, strict=True)]
    assert shown == ["SUCCESS", "FAILED", "EXPIRED"]
    eventually(lambda: len(receiver.bodies) == 2)
    time.sleep(0.2)
    assert sorted(b["status"] for b in receiver.bodies) == ["FAILED", "SUCCESS"]
    with pytest.raises(ValueError, match="SUCCESS"):
        fake.pay(created[0]["pay_token"])


def test_the_pay_token_lapses_after_ten_minutes(fake: OrangeMoneyFake) -> None:
    sent = order()
    created = webpayment(fake, sent).json()
    fake.advance(601)
    assert status_of(fake, created, sent)["status"] == "INITIATED"  # untouched: stays
    page = httpx.get(created["payment_url"])
    assert 'id="confirm"' not in page.text
    fake.lapsed_status = "EXPIRED"
    assert status_of(fake, created, sent)["status"] == "EXPIRED"
    late = httpx.post(
        f"{fake.base_url}/payment/pay_token/{created['pay_token']}/confirm",
        data={"msisdn": SUBSCRIBER, "otp": "1234"},
    )
    assert late.status_code == 200
    assert fake.payment(created["pay_token"]).status == "EXPIRED"


def test_a_held_payment_is_pending_until_settled(fake: OrangeMoneyFake, receiver: Receiver) -> None:
    fake.hold = True
    sent = order(notif_url=receiver.url)
    created = webpayment(fake, sent).json()
    fake.pay(created["pay_token"])
    shown = status_of(fake, created, sent)
    assert shown["status"] == "PENDING" and shown["txnid"]
    time.sleep(0.2)
    assert receiver.bodies == []
    fake.settle(created["pay_token"], "SUCCESS")
    eventually(lambda: len(receiver.bodies) == 1)
    assert status_of(fake, created, sent)["status"] == "SUCCESS"


def test_a_status_query_must_match_the_payment(fake: OrangeMoneyFake) -> None:
    sent = order()
    created = webpayment(fake, sent).json()
    token = created["pay_token"]
    wrong_amount = status(fake, {"order_id": sent["order_id"], "amount": 1, "pay_token": token})
    assert wrong_amount.status_code == 404 and wrong_amount.json()["code"] == 60
    wrong_order = status(fake, {"order_id": "other", "amount": 1200, "pay_token": token})
    assert wrong_order.status_code == 404
    missing = status(fake, {"order_id": sent["order_id"], "amount": 1200})
    assert missing.status_code == 400 and missing.json()["code"] == 23


@pytest.mark.parametrize(
    ("mode", "expected"), [("send", 1), ("drop", 0), ("duplicate", 2), ("delay", 1)]
)
def test_notification_modes(
    fake: OrangeMoneyFake, receiver: Receiver, mode: str, expected: int
) -> None:
    fake.notification_mode, fake.notification_delay = mode, 0.3
    created = webpayment(fake, order(notif_url=receiver.url)).json()
    started = time.monotonic()
    fake.pay(created["pay_token"])
    eventually(lambda: len(receiver.bodies) >= expected)
    time.sleep(0.4)
    assert len(receiver.bodies) == expected
    assert all(b["notif_token"] == created["notif_token"] for b in receiver.bodies)
    if mode == "delay":
        assert time.monotonic() - started >= 0.3


def test_a_reordered_notification_comes_after_the_next_one(
    fake: OrangeMoneyFake, receiver: Receiver
) -> None:
    fake.notification_mode = "reorder"
    first = webpayment(fake, order(1, notif_url=receiver.url)).json()
    second = webpayment(fake, order(2, notif_url=receiver.url)).json()
    fake.pay(first["pay_token"])
    time.sleep(0.2)
    assert receiver.bodies == []
    fake.pay(second["pay_token"])
    eventually(lambda: len(receiver.bodies) == 2)
    assert [b["notif_token"] for b in receiver.bodies] == [
        second["notif_token"],
        first["notif_token"],
    ]


def test_a_forged_notification_carries_no_proof(fake: OrangeMoneyFake, receiver: Receiver) -> None:
    forged = {"status": "SUCCESS", "notif_token": "0" * 32, "txnid": "MP150709.1341.A00073"}
    assert fake.send_forged_notification(receiver.url, forged) == 200
    assert receiver.bodies == [forged] and fake.notifications == []


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
def test_faults(fake: OrangeMoneyFake, fault: str, recorded: bool) -> None:
    headers = bearer(fake)
    fake.fault(fault)
    try:
        answer = webpayment(fake, order(), headers, timeout=1)
        assert answer.status_code == 500 and answer.json()["code"] == 1
    except httpx.HTTPError:
        assert fault not in ("error_500", "error_500_after_accept")
    assert ("MY_ORDER_ID_00001" in fake.orders) is recorded
    assert len(fake.posts("webpayment")) == 1


def test_faults_on_other_paths(fake: OrangeMoneyFake) -> None:
    sent = order()
    created = webpayment(fake, sent).json()
    fake.fault("rate_limit", path="transactionstatus")
    query = {"order_id": sent["order_id"], "amount": 1200, "pay_token": created["pay_token"]}
    limited = status(fake, query)
    assert limited.status_code == 429 and limited.json()["code"] == 53
    assert status(fake, query).status_code == 201
    fake.fault("error_503", path="/oauth/v3/token")
    assert get_token(fake).status_code == 503
