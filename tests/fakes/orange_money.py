"""A contract fake of Orange Money's Web Payment (M Payment) API, Orange Developer
(https://developer.orange.com/apis/om-webpay), over real HTTP on loopback, for the Orange Money
connector's end-to-end tests. It reproduces what Orange documents (facts and sources in
docs/research/orange_money.md); it is not shaped to Cauri. Orange's own sandbox ("dev", currency
`OUV`) needs a human with a USSD simulator to confirm each payment: this fake is where the
connector meets "Orange Money" unattended.

Reproduced:
- OAuth 2.0 client credentials: `POST /oauth/v3/token`, `Authorization: Basic
  base64(client_id:client_secret)` (Orange's "authorization header"), form body
  `grant_type=client_credentials`; 200 `{token_type: "Bearer", access_token, expires_in}`;
  wrong or missing credentials 401 `{error: "invalid_client", error_description}`, another
  grant 400 `unsupported_grant_type`;
- Orange's gateway refusals, `{code, message, description}`: 401 code 40 (no bearer token),
  41 (unknown token), 42 (expired token, `Expired credentials`); 403 code 50 (the application is
  subscribed to another country's offer); 404 code 60; 405 code 61; 406 code 62 (an `Accept`
  that excludes JSON); 429 code 53 (`fault("rate_limit")`); 500 code 1;
- `POST /orange-money-webpay/{country}/v1/webpayment` (`dev` in the sandbox): `merchant_key`,
  `currency` (`OUV` in dev, else the country's), `order_id` (≤30, unique), `amount` (a positive
  integer), `return_url`, `cancel_url`, `notif_url` (≤120 each), `lang`, `reference` (≤30, the
  merchant's name); 201 `{status: 201, message: "OK", pay_token, payment_url, notif_token}`;
  missing or invalid fields 400 (codes 21-24), a merchant_key not the application's 403;
- the hosted payment page at the fake's own `payment_url`
  (`/payment/pay_token/{pay_token}`): an HTML form (MSISDN, OTP, "Confirmer") a headless
  browser or a test can submit, an "Annuler" link that sends the customer to `cancel_url`
  (the status stays INITIATED), a confirmation that sends the customer to `return_url`;
  the pay_token's validity (`payment_ttl`, 10 minutes by default): a confirmation after it
  ends EXPIRED; an untouched payment stays INITIATED (`lapsed_status` to report EXPIRED);
- `POST /orange-money-webpay/{country}/v1/transactionstatus` with `{order_id, amount,
  pay_token}`: 201 `{status, order_id, txnid}`, status INITIATED | PENDING | EXPIRED |
  SUCCESS | FAILED, `txnid` (`MP150709.1341.A00073`-like) once the payment was confirmed;
- the notification POSTed to `notif_url` once a confirmed payment ends SUCCESS or FAILED:
  `{status, notif_token, txnid}`, unsigned, authenticated only by the payment's `notif_token`;
  modes send | drop | delay | duplicate | reorder; forged ones (`send_forged_notification`);
- faults for the next requests: hang, 500 before or after the request is accepted, a
  connection reset or a hang after it is accepted, 429, 503.
Not reproduced (Orange documents none in this API): refunds, payouts or cash-in, cancelling a
payment from the merchant side, notification retries, request signing. Nor the USSD OTP
simulator: the page accepts any OTP (tests steer outcomes with `outcome_for`, `pay`, `fail`).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import html
import json
import re
import secrets
import socket
import string
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.fakes import CALLBACK_TIMEOUT, runner

# Country segment of the path → the currency Orange expects there. `dev` is the sandbox, whose
# currency is OUV (documented). The per-country list is from secondary sources (see the notes).
CURRENCIES = {
    "dev": "OUV",
    "sn": "XOF",
    "ci": "XOF",
    "ml": "XOF",
    "bf": "XOF",
    "gw": "XOF",
    "cm": "XAF",
    "cf": "XAF",
    "gn": "GNF",
    "mg": "MGA",
    "bw": "BWP",
    "cd": "CDF",
    "sl": "SLE",
    "lr": "LRD",
}
STATUSES = ("INITIATED", "PENDING", "EXPIRED", "SUCCESS", "FAILED")
TEST_SUBSCRIBER = "7701100100"  # the sandbox subscriber MSISDN in Orange's guide
LIMITS = {
    "order_id": 30,
    "reference": 30,
    "return_url": 120,
    "cancel_url": 120,
    "notif_url": 120,
}
REQUIRED = (
    "merchant_key",
    "currency",
    "order_id",
    "amount",
    "return_url",
    "cancel_url",
    "notif_url",
)

# Orange's common error codes: (HTTP status, message, description).
ERRORS: dict[int, tuple[int, str, str]] = {
    1: (500, "Internal error", "An internal error occurred. Try your request later."),
    5: (503, "Service unavailable", "The requested service is currently unavailable."),
    21: (400, "Missing body", "The server was expecting a body to be sent within the request."),
    22: (400, "Invalid body", "The posted body is not well-formed and thus can not be parsed."),
    23: (400, "Missing body field", "Some required body fields are missing."),
    24: (400, "Invalid body field", "Some body fields contain invalid values."),
    40: (
        401,
        "Missing credentials",
        "The requested service needs credentials, but none were provided.",
    ),
    41: (
        401,
        "Invalid credentials",
        "The requested service needs credentials, but the ones provided were invalid.",
    ),
    42: (
        401,
        "Expired credentials",
        "The requested service needs credentials, and the ones provided were out-of-date.",
    ),
    50: (
        403,
        "Access denied",
        "The application that makes the request is not authorized to access this endpoint.",
    ),
    53: (
        429,
        "Too many requests",
        "The application has made too many calls and has exceeded the rate limit for this service.",
    ),
    60: (404, "Resource not found", "The requested URI or the requested resource does not exist."),
    61: (405, "Method not allowed", "The URI does not support the requested method."),
    62: (406, "Not acceptable", "The Accept incoming header does not match any available type."),
}
TOKEN_ERRORS = {
    "missing": "The requested service needs credentials, but none were provided.",
    "undecodable": "Unable to decode Basic authorization.",
    "invalid": "The requested service needs credentials, but the ones provided were invalid.",
}

_API = re.compile(r"^/orange-money-webpay/([a-z]{2,3})/v1/(webpayment|transactionstatus)/?$")
_PAGE = re.compile(r"^/payment/pay_token/([0-9a-f]+)(?:/(confirm|cancel))?/?$")
_KINDS = {
    "token": "token",
    "webpayment": "webpayment",
    "transactionstatus": "transactionstatus",
    "confirm": "confirm",
    "cancel": "cancel",
    "page": "page",
}

Answer = tuple[int, dict[str, Any] | None]


def _error(code: int, description: str | None = None) -> Answer:
    status, message, default = ERRORS[code]
    return status, {"code": code, "message": message, "description": description or default}


@dataclass
class Received:
    method: str
    path: str  # with its query string
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, else the form fields, else the text, else None
    raw: bytes
    at: float
    action: str | None  # token, webpayment, transactionstatus, page, confirm, cancel


@dataclass
class Payment:
    pay_token: str
    notif_token: str
    order_id: str
    amount: int
    currency: str
    merchant_key: str
    return_url: str
    cancel_url: str
    notif_url: str
    lang: str | None
    reference: str | None
    created_at: float
    expires_at: float
    status: str = "INITIATED"
    txnid: str | None = None
    msisdn: str | None = None
    confirmed_at: float | None = None
    cancelled: bool = False  # the customer followed the page's cancel link
    notifications_sent: int = 0


@dataclass
class Delivery:
    body: dict[str, Any]
    url: str
    status: int | None  # the receiver's answer; None when it could not be reached
    at: float


@dataclass
class Fault:
    # hang | error_500 | error_500_after_accept | reset_after_accept | hang_after_accept |
    # rate_limit | error_503
    kind: str
    times: int
    path: str | None  # a substring of the path it applies to; None: any webpayment POST


class OrangeMoneyFake:
    def __init__(
        self,
        *,
        client_id: str,
        client_secret: str,
        merchant_key: str,
        country: str = "dev",
        currency: str | None = None,
        token_ttl: int = 3600,
        payment_ttl: float = 600.0,
        host: str = "127.0.0.1",  # loopback; a port of 0 is a free one
        port: int = 0,
    ) -> None:
        self.client_id, self.client_secret = client_id, client_secret
        self.merchant_key = merchant_key
        self.country = country.lower()
        self.currency = currency or CURRENCIES[self.country]
        self.token_ttl = token_ttl
        self.expires_in_as = "int"  # or "str": Orange's examples show both
        self.payment_ttl = payment_ttl
        self.lapsed_status = "INITIATED"  # an untouched payment past its validity; or "EXPIRED"
        self.status_http = 201  # the transaction status answer's HTTP status (201 documented)
        self.hold = False  # confirmed payments stay PENDING until settle()
        self.merchant_key_refusal: Answer = _error(
            50, "The merchant_key is not the one of this application's Orange Money account."
        )
        self.notification_mode = "send"  # send | drop | delay | duplicate | reorder
        self.notification_delay = 0.5
        self.notification_timeout = 5.0
        self.requests: list[Received] = []
        self.payments: dict[str, Payment] = {}  # by pay_token
        self.orders: dict[str, Payment] = {}  # by order_id
        self.notifications: list[Delivery] = []  # every notification attempt, forged excluded
        self.tokens_issued = 0
        self._tokens: dict[str, float] = {}  # access_token → expiry (fake clock)
        self._outcomes: dict[str, str] = {}
        self._faults: list[Fault] = []
        self._held_back: list[Payment] = []
        self._offset = 0.0
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self.base_url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> OrangeMoneyFake:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # URLs, as a client configures them.

    @property
    def token_url(self) -> str:
        return f"{self.base_url}/oauth/v3/token"

    @property
    def api_url(self) -> str:
        """`…/orange-money-webpay/{country}/v1`: append `/webpayment` or `/transactionstatus`."""
        return f"{self.base_url}/orange-money-webpay/{self.country}/v1"

    # Time: Orange's clock, which tests may move forward (token and pay_token expiry).

    def now(self) -> float:
        return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._offset += seconds

    def expire_tokens(self) -> None:
        """Every access token issued so far is now past its lifetime."""
        with self._lock:
            for value in self._tokens:
                self._tokens[value] = self.now() - 1

    # What tests steer: the customer's side of the payment page.

    def outcome_for(self, msisdn: str, status: str) -> None:
        """A confirmation from this number ends `status` (SUCCESS, FAILED or PENDING)."""
        assert status in ("SUCCESS", "FAILED", "PENDING")
        self._outcomes[msisdn] = status

    def payment(self, key: str) -> Payment:
        """The payment with this pay_token or order_id."""
        with self._lock:
            return self.payments.get(key) or self.orders[key]

    def pay(self, pay_token: str, msisdn: str = TEST_SUBSCRIBER) -> Payment:
        """The customer enters number and OTP and clicks "Confirmer": SUCCESS, or EXPIRED when
        the pay_token's validity has passed."""
        return self._confirm(pay_token, msisdn, "SUCCESS")

    def fail(self, pay_token: str, msisdn: str = TEST_SUBSCRIBER) -> Payment:
        """The customer confirms and Orange declines (e.g. insufficient balance): FAILED."""
        return self._confirm(pay_token, msisdn, "FAILED")

    def expire(self, pay_token: str) -> Payment:
        """The customer clicks "Confirmer" after the pay_token's validity: EXPIRED (no
        notification: Orange notifies only SUCCESS and FAILED)."""
        with self._lock:
            payment = self.payments[pay_token]
            if payment.status == "INITIATED":
                payment.status = "EXPIRED"
                payment.confirmed_at = self.now()
            return payment

    def settle(self, pay_token: str, status: str = "SUCCESS") -> Payment:
        """Decides a PENDING payment now (with `hold`)."""
        assert status in ("SUCCESS", "FAILED")
        with self._lock:
            payment = self.payments[pay_token]
            if payment.status != "PENDING":
                return payment
            payment.status = status
        self._notify(payment)
        return payment

    def fault(self, kind: str, *, times: int = 1, path: str | None = None) -> None:
        with self._lock:
            self._faults.append(Fault(kind, times, path))

    # Notifications.

    def notification_body(self, payment: Payment) -> dict[str, Any]:
        return {
            "status": payment.status,
            "notif_token": payment.notif_token,
            "txnid": payment.txnid,
        }

    def send_forged_notification(self, url: str, body: dict[str, Any] | bytes) -> int:
        """What anyone can POST to a notif_url: Orange signs nothing, only the notif_token of
        the payment tells a real notification. Returns the receiver's HTTP status."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        return httpx.post(url, content=raw, headers=headers, timeout=CALLBACK_TIMEOUT).status_code

    def posts(self, kind: str) -> list[Received]:
        """Every request of that kind received (token, webpayment, transactionstatus, page,
        confirm, cancel), accepted or not, re-sends included."""
        action = _KINDS[kind]
        with self._lock:
            return [r for r in self.requests if r.action == action]

    # State changes (called under the lock unless said otherwise).

    def _txnid(self) -> str:
        at = datetime.fromtimestamp(self.now(), UTC)
        letter = secrets.choice(string.ascii_uppercase)
        return f"MP{at:%y%m%d}.{at:%H%M}.{letter}{secrets.randbelow(100000):05d}"

    def _lapsed(self, payment: Payment) -> bool:
        return self.now() >= payment.expires_at

    def _shown_status(self, payment: Payment) -> str:
        if payment.status == "INITIATED" and self._lapsed(payment):
            return self.lapsed_status
        return payment.status

    def _confirm(self, pay_token: str, msisdn: str, wanted: str) -> Payment:
        with self._lock:
            payment = self.payments[pay_token]
            if payment.status != "INITIATED":
                raise ValueError(f"payment {pay_token} is {payment.status}")
            payment.msisdn, payment.confirmed_at = msisdn, self.now()
            if self._lapsed(payment):
                payment.status = "EXPIRED"
                return payment
            payment.txnid = self._txnid()
            outcome = self._outcomes.get(msisdn, wanted)
            payment.status = "PENDING" if self.hold or outcome == "PENDING" else outcome
        self._notify(payment)
        return payment

    def _notify(self, payment: Payment) -> None:
        """The notification of a SUCCESS or FAILED payment, per `notification_mode`, off the
        caller's thread (not under the lock)."""
        if payment.status not in ("SUCCESS", "FAILED"):
            return
        mode = self.notification_mode
        if mode == "drop":
            return
        if mode == "reorder":
            with self._lock:
                if not self._held_back:
                    self._held_back.append(payment)
                    return
                batch = [payment, *self._held_back]
                self._held_back = []
        else:
            batch = [payment] * (2 if mode == "duplicate" else 1)
        delay = self.notification_delay if mode == "delay" else 0.0
        threading.Timer(delay, self._deliver_all, args=(batch,)).start()

    def _deliver_all(self, batch: list[Payment]) -> None:
        for payment in batch:
            body = self.notification_body(payment)
            status: int | None = None
            with contextlib.suppress(httpx.HTTPError):  # Orange documents no re-sends
                status = httpx.post(
                    payment.notif_url,
                    json=body,
                    headers={"Accept": "application/json"},
                    timeout=self.notification_timeout,
                ).status_code
            with self._lock:
                payment.notifications_sent += 1
                self.notifications.append(Delivery(body, payment.notif_url, status, time.time()))

    def _take_fault(self, path: str, action: str | None) -> str | None:
        with self._lock:
            for fault in self._faults:
                if fault.times <= 0:
                    continue
                wanted = fault.path in path if fault.path is not None else action == "webpayment"
                if wanted:
                    fault.times -= 1
                    return fault.kind
        return None

    # The API's answers (called under the lock).

    def _issue_token(self, headers: dict[str, str], form: dict[str, str]) -> Answer:
        header = headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if not header:
            return 401, {"error": "invalid_client", "error_description": TOKEN_ERRORS["missing"]}
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            decoded = ""
        if scheme.lower() != "basic" or ":" not in decoded:
            return 401, {
                "error": "invalid_client",
                "error_description": TOKEN_ERRORS["undecodable"],
            }
        client_id, _, client_secret = decoded.partition(":")
        if (client_id, client_secret) != (self.client_id, self.client_secret):
            return 401, {"error": "invalid_client", "error_description": TOKEN_ERRORS["invalid"]}
        grant = form.get("grant_type")
        if grant is None:
            return 400, {
                "error": "invalid_request",
                "error_description": "The grant_type parameter is missing.",
            }
        if grant != "client_credentials":
            return 400, {
                "error": "unsupported_grant_type",
                "error_description": "Only the client_credentials grant type is supported.",
            }
        value = secrets.token_urlsafe(21)
        self._tokens[value] = self.now() + self.token_ttl
        self.tokens_issued += 1
        ttl: int | str = self.token_ttl if self.expires_in_as == "int" else str(self.token_ttl)
        return 200, {"token_type": "Bearer", "access_token": value, "expires_in": ttl}

    def _bearer_refusal(self, headers: dict[str, str]) -> Answer | None:
        header = headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            return _error(40)
        expiry = self._tokens.get(value.strip())
        if expiry is None:
            return _error(41)
        if expiry <= self.now():
            return _error(42)
        return None

    def _create_payment(self, body: dict[str, Any]) -> Answer:
        for name in REQUIRED:
            if body.get(name) in (None, ""):
                return _error(23, f"The field {name} is missing.")
        for name in (*REQUIRED, "lang", "reference"):
            value = body.get(name)
            if name != "amount" and value is not None and not isinstance(value, str):
                return _error(24, f"The field {name} must be a string.")
        for name, limit in LIMITS.items():
            value = body.get(name)
            if isinstance(value, str) and len(value) > limit:
                return _error(24, f"The field {name} is limited to {limit} characters.")
        amount = body["amount"]
        if isinstance(amount, str) and amount.isdigit():
            amount = int(amount)
        if isinstance(amount, float) and amount.is_integer():
            amount = int(amount)
        if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
            return _error(24, "The field amount must be a positive integer.")
        if body["currency"] != self.currency:
            return _error(
                24, f"The currency {body['currency']} is not allowed here; use {self.currency}."
            )
        if body["merchant_key"] != self.merchant_key:
            return self.merchant_key_refusal
        if body["order_id"] in self.orders:
            return _error(24, "The field order_id must be unique.")
        pay_token = secrets.token_hex(32)
        now = self.now()
        payment = Payment(
            pay_token=pay_token,
            notif_token=secrets.token_hex(16),
            order_id=body["order_id"],
            amount=amount,
            currency=body["currency"],
            merchant_key=body["merchant_key"],
            return_url=body["return_url"],
            cancel_url=body["cancel_url"],
            notif_url=body["notif_url"],
            lang=body.get("lang"),
            reference=body.get("reference"),
            created_at=now,
            expires_at=now + self.payment_ttl,
        )
        self.payments[pay_token] = payment
        self.orders[payment.order_id] = payment
        return 201, {
            "status": 201,
            "message": "OK",
            "pay_token": pay_token,
            "payment_url": f"{self.base_url}/payment/pay_token/{pay_token}",
            "notif_token": payment.notif_token,
        }

    def _status(self, body: dict[str, Any]) -> Answer:
        for name in ("order_id", "amount", "pay_token"):
            if body.get(name) in (None, ""):
                return _error(23, f"The field {name} is missing.")
        payment = self.payments.get(str(body["pay_token"]))
        try:
            amount = int(body["amount"])
        except (TypeError, ValueError):
            return _error(24, "The field amount must be an integer.")
        if payment is None or payment.order_id != body["order_id"] or payment.amount != amount:
            return _error(60, "No transaction matches this order_id, amount and pay_token.")
        shown: dict[str, Any] = {
            "status": self._shown_status(payment),
            "order_id": payment.order_id,
        }
        if payment.txnid is not None:
            shown["txnid"] = payment.txnid
        return self.status_http, shown

    # The payment page (HTML).

    def _page(self, payment: Payment, note: str = "") -> str:
        token = payment.pay_token
        title = "Paiement Orange Money"
        merchant = html.escape(payment.reference or "")
        head = (
            f'<!doctype html><html lang="{html.escape(payment.lang or "fr")}"><head>'
            f'<meta charset="utf-8"><title>{title}</title></head><body>'
            f'<h1>{title}</h1><p id="merchant">{merchant}</p>'
            f'<p id="amount">{payment.amount} {html.escape(payment.currency)}</p>'
            f'<p id="status">{self._shown_status(payment)}</p>'
        )
        note_html = f'<p id="note">{html.escape(note)}</p>' if note else ""
        if payment.status == "INITIATED" and not self._lapsed(payment):
            body = (
                f'<form id="pay" method="post" action="/payment/pay_token/{token}/confirm">'
                '<label>Numéro Orange Money <input name="msisdn" id="msisdn"></label>'
                '<label>Code OTP <input name="otp" id="otp"></label>'
                '<button type="submit" id="confirm">Confirmer</button></form>'
                f'<a id="cancel" href="/payment/pay_token/{token}/cancel">Annuler</a>'
            )
        else:
            shown = self._shown_status(payment)
            label = {
                "INITIATED": "Le délai de paiement est dépassé.",
                "EXPIRED": "Le délai de paiement est dépassé.",
                "PENDING": "Paiement en cours de traitement.",
                "SUCCESS": "Paiement effectué.",
                "FAILED": "Le paiement a échoué.",
            }[shown]
            body = (
                f'<p id="result">{label}</p>'
                f'<a id="return" href="{html.escape(payment.return_url)}">Retour au site</a>'
            )
        return head + note_html + body + "</body></html>"

    # HTTP.

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def _send(
                self,
                status: int,
                data: bytes,
                content_type: str | None,
                extra: Iterable[tuple[str, str]] = (),
            ) -> None:
                self.send_response(status)
                if content_type:
                    self.send_header("Content-Type", content_type)
                for name, value in extra:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _answer(self, status: int, body: dict[str, Any] | None = None) -> None:
                data = json.dumps(body).encode() if body is not None else b""
                self._send(status, data, "application/json" if body is not None else None)

            def _html(self, status: int, text: str) -> None:
                self._send(status, text.encode(), "text/html; charset=utf-8")

            def _redirect(self, url: str) -> None:
                self._send(302, b"", None, [("Location", url)])

            def _hang(self) -> None:
                fake._stopping.wait(120)
                self.close_connection = True

            def _reset(self) -> None:
                # RST instead of FIN: the client sees a reset, with no response at all.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
                self.close_connection = True

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def do_PUT(self) -> None:
                self._handle()

            def do_DELETE(self) -> None:
                self._handle()

            def _action(self, path: str) -> tuple[str | None, re.Match[str] | None]:
                if path.rstrip("/") == "/oauth/v3/token":
                    return "token", None
                match = _API.match(path)
                if match is not None:
                    return match.group(2), match
                match = _PAGE.match(path)
                if match is not None:
                    return match.group(2) or "page", match
                return None, None

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                split = urlsplit(self.path)
                action, match = self._action(split.path)
                parsed: Any = None
                parse_failed = False
                if raw:
                    if "application/x-www-form-urlencoded" in headers.get("content-type", ""):
                        form = parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
                        parsed = {k: v[0] for k, v in form.items()}
                    else:
                        try:
                            parsed = json.loads(raw)
                        except ValueError:
                            parsed, parse_failed = raw.decode("utf-8", "replace"), True
                with fake._lock:
                    fake.requests.append(
                        Received(self.command, self.path, headers, parsed, raw, time.time(), action)
                    )
                if action is None:
                    self._answer(*_error(60))
                    return
                fault = fake._take_fault(split.path, action)
                if fault == "hang":
                    self._hang()
                    return
                if fault == "error_500":
                    self._answer(*_error(1))
                    return
                if fault == "error_503":
                    self._answer(*_error(5))
                    return
                if fault == "rate_limit":
                    self._answer(*_error(53))
                    return
                if action == "token":
                    result = self._token(headers, parsed)
                elif action in ("webpayment", "transactionstatus"):
                    assert match is not None
                    result = self._api(action, match.group(1), headers, parsed, parse_failed)
                else:
                    assert match is not None
                    self._page_action(action, match.group(1), parsed)
                    return
                if fault == "error_500_after_accept":
                    self._answer(*_error(1))
                elif fault == "reset_after_accept":
                    self._reset()
                elif fault == "hang_after_accept":
                    self._hang()
                else:
                    self._answer(*result)

            def _token(self, headers: dict[str, str], parsed: Any) -> Answer:
                if self.command != "POST":
                    return _error(61)
                form = parsed if isinstance(parsed, dict) else {}
                if "application/x-www-form-urlencoded" not in headers.get("content-type", ""):
                    form = {}
                with fake._lock:
                    return fake._issue_token(headers, {k: str(v) for k, v in form.items()})

            def _api(
                self,
                action: str,
                country: str,
                headers: dict[str, str],
                parsed: Any,
                parse_failed: bool,
            ) -> Answer:
                if self.command != "POST":
                    return _error(61)
                with fake._lock:
                    refused = fake._bearer_refusal(headers)
                if refused is not None:
                    return refused
                if country != fake.country:
                    if country in CURRENCIES:
                        return _error(
                            50, f"This application is not subscribed to the {country} offer."
                        )
                    return _error(60)
                accept = headers.get("accept", "")
                if not any(t in accept for t in ("application/json", "*/*", "application/*")):
                    return _error(62)
                if parsed is None:
                    return _error(21)
                if parse_failed or not isinstance(parsed, dict):
                    return _error(22)
                with fake._lock:
                    if action == "webpayment":
                        return fake._create_payment(parsed)
                    return fake._status(parsed)

            def _page_action(self, action: str, pay_token: str, parsed: Any) -> None:
                with fake._lock:
                    payment = fake.payments.get(pay_token)
                if payment is None:
                    self._html(404, "<!doctype html><p>Transaction introuvable.</p>")
                    return
                if action == "page":
                    if self.command != "GET":
                        self._html(405, "<!doctype html><p>Méthode non autorisée.</p>")
                        return
                    with fake._lock:
                        self._html(200, fake._page(payment))
                    return
                if action == "cancel":
                    # The status stays INITIATED: Orange says so for a customer who returns
                    # to the merchant's site without trying to pay.
                    with fake._lock:
                        if payment.status == "INITIATED":
                            payment.cancelled = True
                    self._redirect(payment.cancel_url)
                    return
                if self.command != "POST":
                    self._html(405, "<!doctype html><p>Méthode non autorisée.</p>")
                    return
                form = parsed if isinstance(parsed, dict) else {}
                msisdn = str(form.get("msisdn", "")).strip()
                otp = str(form.get("otp", "")).strip()
                if payment.status != "INITIATED":
                    with fake._lock:
                        self._html(200, fake._page(payment))
                    return
                if not msisdn.isdigit() or not otp.isdigit():
                    with fake._lock:
                        page = fake._page(payment, "Saisissez votre numéro et le code OTP.")
                    self._html(200, page)
                    return
                try:
                    confirmed = fake._confirm(pay_token, msisdn, "SUCCESS")
                except ValueError:  # confirmed meanwhile by another request
                    confirmed = payment
                if confirmed.status == "SUCCESS":
                    self._redirect(confirmed.return_url)
                    return
                with fake._lock:
                    self._html(200, fake._page(confirmed))

        return Handler


# Run on its own (`python -m tests.fakes.orange_money`): a rehearsal of a connector's set-up.


def rehearsal(options: runner.Options) -> runner.Rehearsal:
    fake = OrangeMoneyFake(
        client_id="fake-orange-client-id",
        client_secret="fake-orange-client-secret",
        merchant_key="fakemerchantkey",
        host=options.host,
        port=options.port,
    )

    def waiting() -> list[str]:
        with fake._lock:
            return [t for t, p in fake.payments.items() if p.status == "INITIATED"]

    def act(pay_token: str, pays: bool) -> object:
        return fake.pay(pay_token) if pays else fake.fail(pay_token)

    return runner.Rehearsal(
        fake=fake,
        kind="orange_money",
        environment="sandbox",
        base_url=fake.base_url,
        settings={"country": "dev", "return_url": "https://shop.example/merci"},
        secrets={
            "client_id": "fake-orange-client-id",
            "client_secret": "fake-orange-client-secret",
            "merchant_key": "fakemerchantkey",
        },
        routes={"orange_ci": ("collect",)},
        payment={"amount": 5000, "operator": "orange_ci", "phone_number": "2250712345678"},
        callbacks="a POST to each payment's notif_url, which Cauri names from "
        "CAURI_PUBLIC_URL (`cauri serve` on loopback sets it to its own address)",
        customer=runner.Customer(waiting, act),
        notes=(
            "the customer is scripted (--customer): each payment is confirmed (or declined) "
            "within a second; with --customer waits, open the payment's payment_url instead",
        ),
    )


if __name__ == "__main__":
    raise SystemExit(
        runner.main(
            rehearsal,
            description="Orange Money Web Payment's contract fake, on its own.",
            name="orange-fake",
            customer=True,
        )
    )
