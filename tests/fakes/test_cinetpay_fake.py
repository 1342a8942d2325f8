"""CinetPay's contract fake, driven as CinetPay's docs tell a client to drive CinetPay (plain
httpx, no Cauri code): so that what the connector's tests prove holds against what CinetPay
documents (docs/research/cinetpay.md)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.fakes.cinetpay import CinetPayFake

APIKEY = "12912847765bc0db748fdd44.40081707"
SITE_ID = "445160"
SECRET_KEY = "202423517365bd7c34f6fd43.75285357"
TRANSFER_PASSWORD = "mot-de-passe-api-transfert"
CARD_CUSTOMER = {
    "customer_id": "172",
    "customer_name": "Awa",
    "customer_surname": "Koné",
    "customer_email": "awa@example.com",
    "customer_phone_number": "+2250707000001",
    "customer_address": "Cocody",
    "customer_city": "Abidjan",
    "customer_country": "CI",
    "customer_state": "CI",
    "customer_zip_code": "06510",
}
CHROMIUM = "/usr/bin/chromium"
HAVE_CHROMIUM = os.path.exists(CHROMIUM)
# The documented order of the x-token's concatenation (docs.cinetpay.com, X-TOKEN HMAC).
DOCUMENTED_ORDER = (
    "cpm_site_id",
    "cpm_trans_id",
    "cpm_trans_date",
    "cpm_amount",
    "cpm_currency",
    "signature",
    "payment_method",
    "cel_phone_num",
    "cpm_phone_prefixe",
    "cpm_language",
    "cpm_version",
    "cpm_payment_config",
    "cpm_page_action",
    "cpm_custom",
    "cpm_designation",
    "cpm_error_message",
)


def verify(headers: dict[str, str], form: dict[str, str], secret: str = SECRET_KEY) -> bool:
    """A merchant's check, as the X-TOKEN HMAC page describes it."""
    data = "".join(form.get(name, "") for name in DOCUMENTED_ORDER)
    expected = hmac.new(secret.encode(), data.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, headers.get("x-token", ""))


def eventually(condition: Callable[[], bool], timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.02)


class Receiver:
    """The merchant's notify_url and return_url: keeps (method, path, headers, form) of each
    request, answers 200."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, str], dict[str, str]]] = []
        calls = self.calls

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode()
                form = {k: v[0] for k, v in parse_qs(raw).items()}
                headers = {k.lower(): v for k, v in self.headers.items()}
                calls.append((self.command, self.path, headers, form))
                page = b"<!doctype html><title>Merci</title><h1>Merci</h1>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            do_GET = do_POST = _handle

            def log_message(self, *_: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def posts(self, path: str = "/notify") -> list[tuple[dict[str, str], dict[str, str]]]:
        return [(h, f) for m, p, h, f in self.calls if m == "POST" and p.startswith(path)]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def fake() -> Iterator[CinetPayFake]:
    with CinetPayFake(
        apikey=APIKEY,
        site_id=SITE_ID,
        secret_key=SECRET_KEY,
        transfer_password=TRANSFER_PASSWORD,
        transfer_balance=50_000,
    ) as fake:
        yield fake


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.close()


def initialise(fake: CinetPayFake, receiver: Receiver, **fields: Any) -> httpx.Response:
    body = {
        "apikey": APIKEY,
        "site_id": SITE_ID,
        "transaction_id": str(uuid.uuid4()),
        "amount": 1000,
        "currency": "XOF",
        "description": "Commande 42",
        "notify_url": f"{receiver.url}/notify",
        "return_url": f"{receiver.url}/return",
        "channels": "ALL",
        "lang": "fr",
        "metadata": "commande-42",
    } | fields
    body = {k: v for k, v in body.items() if v is not None}
    return httpx.post(f"{fake.checkout_base_url}/v2/payment", json=body, timeout=2)


def check(fake: CinetPayFake, **fields: Any) -> dict[str, Any]:
    body = {"apikey": APIKEY, "site_id": SITE_ID} | fields
    return httpx.post(f"{fake.checkout_base_url}/v2/payment/check", json=body).json()


def test_initialisation_and_the_check_of_an_untouched_payment(
    fake: CinetPayFake, receiver: Receiver
) -> None:
    answer = initialise(fake, receiver, transaction_id="T-1")
    assert answer.status_code == 200
    created = answer.json()
    assert (created["code"], created["message"]) == ("201", "CREATED")
    token, url = created["data"]["payment_token"], created["data"]["payment_url"]
    assert url == f"{fake.base_url}/payment/{token}" and created["api_response_id"]
    shown = check(fake, transaction_id="T-1")
    assert (shown["code"], shown["message"]) == ("662", "WAITING_CUSTOMER_PAYMENT")
    assert shown["data"]["status"] == "WAITING_FOR_CUSTOMER"
    assert shown["data"]["amount"] == "1000" and shown["data"]["metadata"] == "commande-42"
    assert check(fake, token=token)["data"]["description"] == "Commande 42"
    unknown = httpx.post(
        f"{fake.base_url}/v2/payment/check",
        json={"apikey": APIKEY, "site_id": SITE_ID, "transaction_id": "nope"},
    )
    assert unknown.status_code == 400 and unknown.json()["code"] == "624"
    assert fake.posts("payment")[0].body["transaction_id"] == "T-1"


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"apikey": None}, "608"),
        ({"apikey": "wrong"}, "609"),
        ({"site_id": "1"}, "613"),
        ({"notify_url": None}, "608"),
        ({"description": None}, "608"),
        ({"currency": "EUR"}, "612"),
        ({"amount": "abc"}, "611"),
        ({"amount": 1002}, "628"),
        ({"amount": 50}, "641"),
        ({"lang": "de"}, "615"),
        ({"channels": "BANK"}, "608"),
        ({"channels": "CREDIT_CARD"}, "608"),
        ({"customer_name": "Awa", "customer_email": "a@b.c"}, "624"),
        ({"lock_phone_number": True}, "608"),
    ],
)
def test_initialisation_refusals(
    fake: CinetPayFake, receiver: Receiver, fields: dict[str, Any], code: str
) -> None:
    answer = initialise(fake, receiver, **fields)
    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == code and body["message"] and "data" not in body
    assert fake.payments == {}


def test_amounts_and_a_reused_transaction_id(fake: CinetPayFake, receiver: Receiver) -> None:
    assert initialise(fake, receiver, amount=2.5, currency="USD").json()["code"] == "201"
    assert initialise(fake, receiver, amount=1003, currency="GNF").json()["code"] == "628"
    assert initialise(fake, receiver, transaction_id="T-2").json()["code"] == "201"
    assert initialise(fake, receiver, transaction_id="T-2").json()["code"] == "624"


def test_the_hosted_page_pay_and_return(fake: CinetPayFake, receiver: Receiver) -> None:
    url = initialise(fake, receiver, transaction_id="T-3").json()["data"]["payment_url"]
    page = httpx.get(url)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for element in ('id="pay-form"', 'id="pay"', 'id="cancel"', 'id="payment_method"'):
        assert element in page.text
    assert 'value="VISAM"' not in page.text  # no card option without the customer fields
    action = re.search(r'id="pay-form" method="post" action="([^"]+)"', page.text)
    assert action is not None
    result = httpx.post(
        fake.base_url + action.group(1),
        data={"payment_method": "MOMO", "phone_prefix": "225", "phone_number": "0505000001"},
    )
    assert 'id="return-form"' in result.text
    assert f'action="{receiver.url}/return"' in result.text
    payment = fake.payments["T-3"]
    assert f'name="token" value="{payment.token}"' in result.text
    assert 'name="transaction_id" value="T-3"' in result.text
    shown = check(fake, transaction_id="T-3")
    assert (shown["code"], shown["message"]) == ("00", "SUCCES")
    assert shown["data"]["status"] == "ACCEPTED" and shown["data"]["payment_method"] == "MOMO"
    assert shown["data"]["operator_id"] and shown["data"]["payment_date"]
    eventually(lambda: len(receiver.posts()) == 1)
    headers, form = receiver.posts()[0]
    assert verify(headers, form)
    assert form["cpm_trans_id"] == "T-3" and form["cpm_site_id"] == SITE_ID
    assert form["cel_phone_num"] == "0505000001" and form["cpm_phone_prefixe"] == "225"
    assert form["cpm_amount"] == "1000" and form["cpm_custom"] == "commande-42"
    assert form["cpm_error_message"] == "SUCCES" and form["cpm_designation"] == "Commande 42"
    assert re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", form["cpm_trans_date"])
    assert "application/x-www-form-urlencoded" in headers["content-type"]
    assert any(m == "GET" and p == "/notify" for m, p, _, _ in receiver.calls)  # the ping
    again = httpx.get(url)  # a decided payment shows its outcome, not the form again
    assert 'id="pay-form"' not in again.text and 'id="return"' in again.text


@pytest.mark.parametrize(
    ("button", "code", "message"),
    [("cancel", "627", "TRANSACTION_CANCEL"), ("refuse", "600", "PAYMENT_FAILED")],
)
def test_the_hosted_page_cancel_and_refuse(
    fake: CinetPayFake, receiver: Receiver, button: str, code: str, message: str
) -> None:
    url = initialise(fake, receiver, transaction_id="T-4").json()["data"]["payment_url"]
    httpx.post(f"{url}/{button}")
    shown = check(fake, transaction_id="T-4")
    assert (shown["code"], shown["message"], shown["data"]["status"]) == (code, message, "REFUSED")
    eventually(lambda: len(receiver.posts()) == 1)
    headers, form = receiver.posts()[0]
    assert verify(headers, form) and form["cpm_error_message"] == message


def test_the_card_option_and_outcomes_per_number(fake: CinetPayFake, receiver: Receiver) -> None:
    initialise(fake, receiver, transaction_id="T-5")
    with pytest.raises(ValueError):
        fake.pay("T-5", "VISAM")
    url = initialise(fake, receiver, transaction_id="T-6", **CARD_CUSTOMER).json()["data"]
    page = httpx.get(url["payment_url"]).text
    assert 'value="VISAM"' in page and 'value="0707000001"' in page
    fake.pay("T-6", "VISAM")
    assert check(fake, transaction_id="T-6")["data"]["payment_method"] == "VISAM"
    fake.payment_outcome_for("0101000009", "602")
    url = initialise(fake, receiver, transaction_id="T-7").json()["data"]["payment_url"]
    httpx.post(f"{url}/pay", data={"payment_method": "FLOOZ", "phone_number": "0101000009"})
    shown = check(fake, transaction_id="T-7")
    assert (shown["code"], shown["data"]["status"]) == ("602", "REFUSED")


def test_a_push_operator_waits_for_the_customer(fake: CinetPayFake, receiver: Receiver) -> None:
    fake.notify_waiting = True
    initialise(fake, receiver, transaction_id="T-8")
    fake.await_customer("T-8", "OM", phone="0707000002")
    shown = check(fake, transaction_id="T-8")
    assert (shown["code"], shown["data"]["status"]) == ("662", "WAITING_FOR_CUSTOMER")
    # Each notification travels on its own thread, so the test waits for the first one
    # before the customer confirms: otherwise the two may arrive in either order.
    eventually(lambda: len(receiver.posts()) == 1)
    fake.pay("T-8", "OM")
    eventually(lambda: len(receiver.posts()) == 2)
    messages = [form["cpm_error_message"] for _, form in receiver.posts()]
    assert messages == ["WAITING_CUSTOMER_PAYMENT", "SUCCES"]
    with pytest.raises(ValueError):
        fake.cancel("T-8")


def test_return_by_get(fake: CinetPayFake, receiver: Receiver) -> None:
    fake.return_method = "GET"
    url = initialise(fake, receiver, return_url=f"{receiver.url}/return?commande=42").json()
    result = httpx.post(
        url["data"]["payment_url"] + "/pay",
        data={"payment_method": "OM", "phone_number": "0707000003"},
    ).text
    link = re.search(r'id="return" href="([^"]+)"', result)
    assert link is not None
    query = parse_qs(urlsplit(link.group(1).replace("&amp;", "&")).query)
    assert query["commande"] == ["42"] and query["transaction_id"] and query["token"]


@pytest.mark.parametrize(("mode", "expected"), [("send", 1), ("drop", 0), ("duplicate", 2)])
def test_notification_modes(
    fake: CinetPayFake, receiver: Receiver, mode: str, expected: int
) -> None:
    fake.notify_mode, fake.ping_notify_url = mode, False
    initialise(fake, receiver, transaction_id="T-9")
    fake.pay("T-9")
    eventually(lambda: len(receiver.posts()) == expected)
    time.sleep(0.2)
    assert len(receiver.posts()) == expected


def test_delayed_and_reordered_notifications(fake: CinetPayFake, receiver: Receiver) -> None:
    fake.notify_mode, fake.notify_delay = "delay", 0.3
    initialise(fake, receiver, transaction_id="T-10")
    fake.pay("T-10")
    time.sleep(0.15)
    assert receiver.posts() == []
    eventually(lambda: len(receiver.posts()) == 1)
    fake.notify_mode = "reorder"
    for reference in ("T-11", "T-12"):
        initialise(fake, receiver, transaction_id=reference)
        fake.pay(reference)
    eventually(lambda: len(receiver.posts()) == 3)
    assert [f["cpm_trans_id"] for _, f in receiver.posts()[1:]] == ["T-12", "T-11"]


def test_forged_notifications(fake: CinetPayFake, receiver: Receiver) -> None:
    initialise(fake, receiver, transaction_id="T-13")
    fields = fake.notification_fields(fake.payments["T-13"]) | {"cpm_error_message": "SUCCES"}
    url = f"{receiver.url}/notify"
    assert fake.send_forged_notification(url, fields) == 200
    fake.send_forged_notification(url, fields, secret=SECRET_KEY)
    fake.send_forged_notification(url, fields, signed=False)
    checks = [verify(h, f) for h, f in receiver.posts()]
    assert checks == [False, True, False]


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
def test_faults(fake: CinetPayFake, receiver: Receiver, fault: str, recorded: bool) -> None:
    fake.fault(fault, path="/v2/payment")
    try:
        answer = initialise(fake, receiver, transaction_id="T-14")
        assert answer.status_code == 500
    except httpx.HTTPError:
        assert fault not in ("error_500", "error_500_after_accept")
    assert ("T-14" in fake.payments) is recorded
    assert initialise(fake, receiver).json()["code"] == "201"  # the next one is served


def test_rate_limit(fake: CinetPayFake, receiver: Receiver) -> None:
    fake.fault("rate_limit", times=2, path="/check")
    initialise(fake, receiver, transaction_id="T-15")
    statuses = [
        httpx.post(
            f"{fake.base_url}/v2/payment/check",
            json={"apikey": APIKEY, "site_id": SITE_ID, "transaction_id": "T-15"},
        ).status_code
        for _ in range(3)
    ]
    assert statuses == [429, 429, 200]


# The Transfer API.


def login(fake: CinetPayFake, password: str = TRANSFER_PASSWORD) -> httpx.Response:
    return httpx.post(
        f"{fake.transfer_base_url}/v1/auth/login",
        params={"lang": "fr"},
        data={"apikey": APIKEY, "password": password},
    )


def token(fake: CinetPayFake) -> str:
    return str(login(fake).json()["data"]["token"])


def add_contact(fake: CinetPayFake, value: str, phone: str = "0707000010") -> dict[str, Any]:
    contact = {"prefix": "225", "phone": phone, "name": "Koné", "surname": "Awa", "email": "a@b.c"}
    return httpx.post(
        f"{fake.base_url}/v1/transfer/contact",
        params={"token": value, "lang": "fr"},
        data={"data": json.dumps([contact])},
    ).json()


def send(
    fake: CinetPayFake, value: str, receiver: Receiver, **fields: Any
) -> tuple[int, dict[str, Any]]:
    item = {
        "prefix": "225",
        "phone": "0707000010",
        "amount": 5000,
        "client_transaction_id": str(uuid.uuid4()),
        "notify_url": f"{receiver.url}/transfer-notify",
    } | fields
    answer = httpx.post(
        f"{fake.base_url}/v1/transfer/money/send/contact",
        params={"token": value, "lang": "fr"},
        data={"data": json.dumps([item])},
    )
    return answer.status_code, answer.json()


def transfer_status(fake: CinetPayFake, value: str, reference: str) -> dict[str, Any]:
    return httpx.get(
        f"{fake.base_url}/v1/transfer/check/money",
        params={"token": value, "lang": "fr", "client_transaction_id": reference},
    ).json()


def balance(fake: CinetPayFake, value: str) -> dict[str, Any]:
    return httpx.get(
        f"{fake.base_url}/v1/transfer/check/balance", params={"token": value, "lang": "fr"}
    ).json()


def test_login_and_tokens(fake: CinetPayFake) -> None:
    issued = login(fake).json()
    assert (issued["code"], issued["message"]) == (0, "OPERATION_SUCCES")
    refused = login(fake, "wrong")
    assert refused.status_code == 400
    assert refused.json() | {"description": ""} == {
        "code": "701",
        "message": "INVALID_CREDENTIALS",
        "description": "",
        "data": [],
    }
    assert balance(fake, "nope")["code"] == "706"
    fake.token_ttl = 0.2
    stale = token(fake)
    time.sleep(0.3)
    assert balance(fake, stale)["code"] == "705"


def test_a_transfer_from_contact_to_validation(fake: CinetPayFake, receiver: Receiver) -> None:
    value = token(fake)
    assert balance(fake, value)["data"] == {"amount": 50000, "inUsing": 0, "available": 50000}
    added = add_contact(fake, value)
    assert added["code"] == 0 and added["data"][0][0]["status"] == "success"
    again = add_contact(fake, value)
    assert again["code"] == 0 and again["data"][0][0]["code"] == 726
    status, sent = send(fake, value, receiver, client_transaction_id="P-1")
    assert status == 200 and sent["code"] == 0
    item = sent["data"][0][0]
    assert item["treatment_status"] == "NEW" and item["client_transaction_id"] == "P-1"
    assert item["transaction_id"] and item["lot"]
    shown = transfer_status(fake, value, "P-1")
    assert shown["code"] == 0 and shown["data"][0]["treatment_status"] == "VAL"
    assert shown["data"][0]["operator_transaction_id"] and shown["data"][0]["validated_at"]
    assert balance(fake, value)["data"] == {"amount": 45000, "inUsing": 0, "available": 45000}
    eventually(lambda: len(receiver.posts("/transfer-notify")) == 1)
    headers, form = receiver.posts("/transfer-notify")[0]
    assert form["client_transaction_id"] == "P-1" and form["treatment_status"] == "VAL"
    assert form["transaction_id"] == item["transaction_id"] and form["amount"] == "5000"
    assert "x-token" not in headers
    assert transfer_status(fake, value, "unknown")["code"] == "723"


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"phone": "0505999999"}, "724"),
        ({"notify_url": ""}, "725"),
        ({"amount": 5001}, "801"),
        ({"amount": 50}, "719"),
        ({"amount": 60000}, "602"),
        ({"phone": "12"}, "802"),
        ({"client_transaction_id": ""}, "704"),
    ],
)
def test_transfer_refusals(
    fake: CinetPayFake, receiver: Receiver, fields: dict[str, Any], code: str
) -> None:
    value = token(fake)
    add_contact(fake, value)
    status, body = send(fake, value, receiver, **fields)
    assert status == 400 and body["code"] == code and body["data"] == []
    assert fake.transfers == {}
    assert balance(fake, value)["data"]["available"] == 50000


def test_a_reused_reference_bad_json_and_wrong_method(
    fake: CinetPayFake, receiver: Receiver
) -> None:
    value = token(fake)
    add_contact(fake, value)
    assert send(fake, value, receiver, client_transaction_id="P-2")[1]["code"] == 0
    assert send(fake, value, receiver, client_transaction_id="P-2")[1]["code"] == "805"
    bad = httpx.post(
        f"{fake.base_url}/v1/transfer/money/send/contact",
        params={"token": value},
        data={"data": "[{"},
    )
    assert bad.json()["code"] == "718"
    wrong = httpx.get(f"{fake.base_url}/v1/transfer/money/send/contact", params={"token": value})
    assert wrong.json()["code"] == "708"


def test_rejections_per_number_and_held_transfers(fake: CinetPayFake, receiver: Receiver) -> None:
    value = token(fake)
    add_contact(fake, value)
    add_contact(fake, value, phone="0505000020")
    fake.outcome_for("0505000020", "REJ", "Numéro inactif")
    send(fake, value, receiver, phone="0505000020", client_transaction_id="P-3")
    shown = transfer_status(fake, value, "P-3")["data"][0]
    assert shown["treatment_status"] == "REJ" and shown["comment"] == "Numéro inactif"
    assert balance(fake, value)["data"]["available"] == 50000
    fake.hold = True
    send(fake, value, receiver, client_transaction_id="P-4", amount=10000)
    assert transfer_status(fake, value, "P-4")["data"][0]["treatment_status"] == "NEW"
    assert balance(fake, value)["data"] == {"amount": 50000, "inUsing": 10000, "available": 40000}
    fake.settle_transfer("P-4", "VAL")
    assert transfer_status(fake, value, "P-4")["data"][0]["treatment_status"] == "VAL"
    assert balance(fake, value)["data"]["amount"] == 40000
    eventually(lambda: len(receiver.posts("/transfer-notify")) == 2)
    statuses = [f["treatment_status"] for _, f in receiver.posts("/transfer-notify")]
    assert statuses == ["REJ", "VAL"]


def test_a_transfer_accepted_behind_a_reset(fake: CinetPayFake, receiver: Receiver) -> None:
    value = token(fake)
    add_contact(fake, value)
    fake.fault("reset_after_accept", path="/money/send")
    with pytest.raises(httpx.HTTPError):
        send(fake, value, receiver, client_transaction_id="P-5")
    assert transfer_status(fake, value, "P-5")["data"][0]["treatment_status"] == "VAL"
    assert send(fake, value, receiver, client_transaction_id="P-5")[1]["code"] == "805"


# The hosted page in a real browser.


@pytest.mark.browser
async def test_the_hosted_page_in_chromium(fake: CinetPayFake, receiver: Receiver) -> None:
    if not HAVE_CHROMIUM:
        pytest.skip(f"{CHROMIUM} is absent")
    from playwright.async_api import async_playwright

    created = initialise(fake, receiver, transaction_id="T-20").json()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            page = await browser.new_page()
            await page.goto(created["data"]["payment_url"])
            await page.select_option("#payment_method", "WAVECI")
            await page.fill("#phone_number", "0101000021")
            await page.click("#pay")
            await page.wait_for_url(f"{receiver.url}/return")
        finally:
            await browser.close()
    returned = receiver.posts("/return")
    assert returned and returned[0][1]["transaction_id"] == "T-20"
    assert returned[0][1]["token"] == created["data"]["payment_token"]
    assert check(fake, transaction_id="T-20")["data"]["payment_method"] == "WAVECI"
