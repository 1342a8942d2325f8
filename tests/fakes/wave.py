"""A contract fake of Wave's Business APIs (Checkout, Payout, Balance) and of its webhooks, over
real HTTP on loopback, for the Wave connector's end-to-end tests. Wave has no public sandbox:
this fake is the only place the connector meets "Wave". It reproduces what Wave documents
(facts and sources in docs/research/wave.md); it is not shaped to Cauri.

Reproduced:
- API keys (`Authorization: Bearer wave_sn_prod_…`), each bound to one wallet and to the APIs
  ticked for it in the portal (here `checkout_api`, `payouts_api`, `balance_api`): the
  authentication-phase refusals, all 401 `{code, message}` (`missing-auth-header`,
  `invalid-auth`, `api-key-not-provided`, `no-matching-api-key`, `api-key-revoked`); 403
  `invalid-wallet` for a key not allowed the API (`permission_error`), 403 `disabled-wallet`
  for a disabled wallet (which may still read its balance); optional request signing
  (`request_signing_secret`: `Wave-Signature: t=…,v1=…` over timestamp + raw body);
- Checkout: `POST /v1/checkout/sessions` (amount string, currency, https `success_url` and
  `error_url`, `client_reference` ≤255, `restrict_payer_mobile` E.164,
  `aggregated_merchant_id`), answering the session object (`id` `cos-…`, `wave_launch_url`,
  `checkout_status` open | complete | expired, `payment_status` processing | cancelled |
  succeeded, `transaction_id`, `last_payment_error`, `when_created`, `when_expires`,
  `when_completed`, …); `GET …/sessions/{id}`, `GET …/sessions?transaction_id=`,
  `GET …/sessions/search?client_reference=` (`{"result": [...]}`), `POST …/{id}/expire` (200,
  no body; 409 once not open), `POST …/{id}/refund` (200, no body, idempotent;
  `checkout-refund-failed` unless the payment succeeded); 404 `checkout-session-not-found`;
  400 `request-validation-error` with `details: [{loc, msg, type}]`; sessions expire after
  `session_ttl` (their `when_expires`), then `expired` / `cancelled`;
- Payout: `POST /v1/payout` with a mandatory `Idempotency-Key` (≤255; same key and same body:
  the same payout, never sent twice; same key, other body: 409 `idempotency-mismatch`),
  synchronous (`succeeded` or `failed` with `payout_error {error_code, error_message}` in the
  answer, or `processing`), `fee`, `timestamp`; pre-check refusals at top level
  (`currency-mismatch`, `country-mismatch`, `invalid-aggregated-merchant-id`,
  `request-not-json`, `request-parsing-error`, `request-validation-error`);
  `insufficient-funds` as a failed payout (`insufficient_funds_as = "payout"`) or as a
  top-level 422 (`"error"`); `GET /v1/payout/{id}` (404 `not-found`),
  `GET /v1/payouts/search?client_reference=` (`{"result": [...]}`),
  `POST /v1/payout/{id}/reverse` (200, no body, idempotent; within 3 days of `timestamp`, else
  `payout-reversal-time-limit-exceeded`; `insufficient-funds` and
  `payout-reversal-account-terminated` on demand); the wallet's balance moves with each;
- `GET /v1/balance`: `{amount, currency}`;
- `GET /v1/transactions?date=YYYY-MM-DD&after=<cursor>` (Balance & Reconciliation API, one
  UTC day a call, `{page_info: {start_cursor, end_cursor, has_next_page}, date, items}`, pages
  of `transactions_page_size`): one item per movement of the wallet (`timestamp`,
  `transaction_id`, `transaction_type` api_checkout | api_checkout_refund | api_payout |
  api_payout_reversal | merchant_sweep, `amount` signed and net of `fee`, `fee`, `balance`
  after it, `currency`, `is_reversal`, `counterparty_mobile`, `client_reference`,
  `checkout_api_session_id`); and what a real wallet's list may hold that Cauri did not ask
  (`statement_*`: a line twice, a line missing, an amount changed, a movement of its own,
  a sweep to the bank);
- webhooks to the one `webhook_url` (as registered in the portal): `{id, type, data}` events
  `checkout.session.completed` and `checkout.session.payment_failed` (data: the session),
  authenticated by `Wave-Signature: t=<unix>,v1=<hex>[,v1=<hex>…]` (HMAC-SHA256 over the
  timestamp followed by the raw body, one `v1` per secret in `webhook_secrets`) or, with
  `webhook_auth = "shared_secret"`, `Authorization: Bearer <secret>`; re-sent while the
  receiver does not answer 2xx (`webhook_retry_delays`); modes send | drop | delay |
  duplicate | reorder; forged deliveries (`send_forged_webhook`);
- faults for the next requests: hang, 500 before or after the request is accepted, a
  connection reset or a hang after it is accepted, 429 `too-many-requests` (`rate_limit`).
Not reproduced: payout batches (`/v1/payout-batch`),
recipient verification, aggregated merchants, B2B and merchant-payment events, the hosted
payment page itself (tests call `pay`/`fail_payment` as the customer would act).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import re
import secrets
import socket
import string
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.fakes import CALLBACK_TIMEOUT, runner

DEFAULT_PERMISSIONS = ("checkout_api", "payouts_api", "balance_api")
# Country code in the key (`wave_sn_prod_…`) → the calling code of its wallet's numbers.
CALLING_CODES = {
    "sn": "+221",
    "ci": "+225",
    "ml": "+223",
    "bf": "+226",
    "gm": "+220",
    "ug": "+256",
    "cm": "+237",
    "sl": "+232",
}
ZERO_DECIMAL_CURRENCIES = {"XOF", "XAF", "UGX"}
REVERSAL_WINDOW = 3 * 24 * 3600.0

AUTH_MESSAGES = {
    "missing-auth-header": "Your request should include an HTTP auth header.",
    "invalid-auth": "Your HTTP auth header can't be processed.",
    "api-key-not-provided": "Your request should include an API key.",
    "no-matching-api-key": "The key you provided doesn't exist in our system.",
    "api-key-revoked": "Your API key has been revoked.",
}
PAYMENT_ERRORS = {  # a checkout payment attempt's `last_payment_error.code`
    "blocked-account": "The customer used a blocked account to try to pay.",
    "cross-border-payment-not-allowed": "Cross-border payments are not allowed.",
    "customer-age-restricted": "The customer is a minor and cannot pay for this.",
    "insufficient-funds": "The customer didn't have enough balance.",
    "kyb-limits-exceeded": "Your business has exceeded its account limits.",
    "payer-mobile-mismatch": "The payer's mobile number doesn't match the one required.",
    "payment-failure": "A technical error occurred in Wave's system.",
}
PAYOUT_ERRORS = {  # a payout's `payout_error.error_code`, and top-level payout refusals
    "insufficient-funds": "Insufficient funds in wallet.",
    "recipient-limit-exceeded": "The recipient has reached their monthly limit.",
    "recipient-account-blocked": "The recipient's Wave account is blocked.",
    "recipient-account-inactive": "The recipient's Wave account is inactive.",
    "recipient-minor": "The recipient is a minor and can't receive this payout.",
    "internal-server-error": "A technical error occurred in Wave's system.",
    "payout-reversal-time-limit-exceeded": "The time limit for reversing this payout expired.",
    "payout-reversal-account-terminated": "The recipient's wallet was deactivated.",
}
# Not documented (the docs give the 409 only): the code of an expire on a session not open.
EXPIRE_CONFLICT = "checkout-session-not-open"

_AMOUNT = re.compile(r"^(0|[1-9][0-9]*)(\.[0-9]{1,2})?$")
_MOBILE = re.compile(r"^\+[1-9][0-9]{6,14}$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")
_KEY = re.compile(r"^wave_([a-z]{2})_")
_ALNUM = string.ascii_lowercase + string.digits

_ROUTES: list[tuple[str, re.Pattern[str], str, str]] = [
    ("POST", re.compile(r"^/v1/checkout/sessions/?$"), "create_session", "checkout_api"),
    ("GET", re.compile(r"^/v1/checkout/sessions/?$"), "session_by_transaction", "checkout_api"),
    ("GET", re.compile(r"^/v1/checkout/sessions/search/?$"), "search_sessions", "checkout_api"),
    ("GET", re.compile(r"^/v1/checkout/sessions/([^/]+)/?$"), "get_session", "checkout_api"),
    ("POST", re.compile(r"^/v1/checkout/sessions/([^/]+)/expire/?$"), "expire", "checkout_api"),
    ("POST", re.compile(r"^/v1/checkout/sessions/([^/]+)/refund/?$"), "refund", "checkout_api"),
    ("POST", re.compile(r"^/v1/payout/?$"), "create_payout", "payouts_api"),
    ("GET", re.compile(r"^/v1/payout/([^/]+)/?$"), "get_payout", "payouts_api"),
    ("POST", re.compile(r"^/v1/payout/([^/]+)/reverse/?$"), "reverse", "payouts_api"),
    ("GET", re.compile(r"^/v1/payouts/search/?$"), "search_payouts", "payouts_api"),
    ("GET", re.compile(r"^/v1/balance/?$"), "balance", "balance_api"),
    ("GET", re.compile(r"^/v1/transactions/?$"), "transactions", "balance_api"),
]
_KINDS = {
    "checkout": "create_session",
    "expire": "expire",
    "refund": "refund",
    "payout": "create_payout",
    "reverse": "reverse",
}

Answer = tuple[int, dict[str, Any] | None]


def _stamp(at: float | None) -> str | None:
    if at is None:
        return None
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _money(value: Decimal) -> str:
    if value == value.to_integral_value():
        return str(int(value))
    return str(value.quantize(Decimal("0.01")))


def _error(status: int, code: str, message: str | None = None) -> Answer:
    return status, {"code": code, "message": message or PAYOUT_ERRORS.get(code, code)}


def _invalid(loc: str, msg: str, kind: str = "value_error") -> Answer:
    return 400, {
        "code": "request-validation-error",
        "message": "Request invalid",
        "details": [{"loc": [loc], "msg": msg, "type": kind}],
    }


@dataclass
class Received:
    method: str
    path: str  # with its query string
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, else the text, else None
    raw: bytes
    at: float
    action: str | None  # create_session, create_payout, refund, expire, reverse, …


@dataclass
class ApiKey:
    permissions: set[str]
    revoked: bool = False


@dataclass
class Session:
    id: str
    amount: str
    currency: str
    success_url: str
    error_url: str
    client_reference: str | None
    restrict_payer_mobile: str | None
    aggregated_merchant_id: str | None
    when_created: float
    when_expires: float
    checkout_status: str = "open"
    payment_status: str = "processing"
    transaction_id: str | None = None
    when_completed: float | None = None
    last_payment_error: dict[str, str] | None = None
    refunded: bool = False
    refund_requests: int = 0


@dataclass
class Payout:
    id: str
    currency: str
    receive_amount: str
    fee: str
    mobile: str
    name: str | None
    national_id: str | None
    client_reference: str | None
    payment_reason: str | None
    aggregated_merchant_id: str | None
    timestamp: float
    idempotency_key: str
    status: str = "processing"
    error_code: str | None = None
    error_message: str | None = None

    @property
    def total(self) -> Decimal:
        return Decimal(self.receive_amount) + Decimal(self.fee)


@dataclass
class Fault:
    # hang | error_500 | error_500_after_accept | reset_after_accept | hang_after_accept |
    # rate_limit
    kind: str
    times: int
    path: str | None  # a substring of the path it applies to; None: any creation POST


@dataclass
class Delivery:
    event: dict[str, Any]
    attempt: int  # 1 for the first try, 2 for the first re-send, …
    status: int | None  # the receiver's answer; None when it could not be reached
    at: float
    headers: dict[str, str] = field(default_factory=dict)


class WaveFake:
    def __init__(
        self,
        api_key: str,
        *,
        permissions: Iterable[str] = DEFAULT_PERMISSIONS,
        webhook_secret: str,
        webhook_url: str | None = None,
        currency: str = "XOF",
        balance: str = "1000000",
        business_name: str = "Cauri Test Shop",
        session_ttl: float = 30 * 60,
        host: str = "127.0.0.1",  # loopback; a port of 0 is a free one
        port: int = 0,
    ) -> None:
        self.api_key = api_key
        self.keys: dict[str, ApiKey] = {api_key: ApiKey(set(permissions))}
        match = _KEY.match(api_key)
        self.calling_code = CALLING_CODES.get(match.group(1)) if match else None
        self.webhook_url = webhook_url
        self.webhook_secrets: list[str] = [webhook_secret]  # several while rotating
        self.webhook_auth = "signing_secret"  # or "shared_secret"
        self.currency = currency
        self.balance = Decimal(balance)
        self.business_name = business_name
        self.session_ttl = session_ttl
        self.payout_fee_percent = Decimal("1")
        self.checkout_fee_percent = Decimal("1")
        self.permission_error = ("invalid-wallet", "Your wallet can't be used with this API.")
        self.wallet_disabled = False
        self.request_signing_secret: str | None = None
        self.aggregated_merchants: set[str] = set()
        self.checkout_idempotency = False  # the Checkout docs do not document Idempotency-Key
        self.insufficient_funds_as = "payout"  # or "error": a top-level 422
        self.absent_fields = "omit"  # or "null": absent optional fields shown as null
        self.hold = False  # payouts stay processing until settle_payout()
        self.webhook_mode = "send"  # send | drop | delay | duplicate | reorder
        self.webhook_delay = 0.5
        self.webhook_retry_delays: tuple[float, ...] = (0.1, 0.3, 1.0)
        self.webhook_timeout = 5.0
        self.requests: list[Received] = []
        self.sessions: dict[str, Session] = {}
        self.payouts: dict[str, Payout] = {}
        self.events: list[dict[str, Any]] = []  # every event emitted, in order
        # The wallet's movements (`GET /v1/transactions`), in order, and its balance after each.
        self.transactions: list[dict[str, Any]] = []
        self.transactions_page_size = 50
        self._booked_balance = self.balance
        self.deliveries: list[Delivery] = []  # every attempt to deliver one
        self._outcomes: dict[str, tuple[str, str | None]] = {}
        self._refused_refunds: set[str] = set()
        self._refused_reversals: dict[str, str] = {}
        self._idempotency: dict[str, tuple[Any, str]] = {}
        self._session_idempotency: dict[str, tuple[Any, str]] = {}
        self._faults: list[Fault] = []
        self._held_back: list[dict[str, Any]] = []
        self._offset = 0.0
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self.base_url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> WaveFake:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # Time: Wave's clock, which tests may move forward (expiry, the reversal window).

    def now(self) -> float:
        return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._offset += seconds

    # Keys, as the business portal manages them.

    def add_key(self, key: str, permissions: Iterable[str] = DEFAULT_PERMISSIONS) -> None:
        with self._lock:
            self.keys[key] = ApiKey(set(permissions))

    def revoke(self, key: str | None = None) -> None:
        with self._lock:
            self.keys[key or self.api_key].revoked = True

    # What tests steer: the customer's side of a checkout.

    def pay(self, session_id: str) -> dict[str, Any]:
        """The customer confirms in the Wave app: the session completes, the payment succeeds."""
        with self._lock:
            session = self.sessions[session_id]
            self._refresh(session)
            if session.checkout_status != "open":
                raise ValueError(f"session {session_id} is {session.checkout_status}")
            session.checkout_status, session.payment_status = "complete", "succeeded"
            session.transaction_id = "T_" + self._token(10, string.ascii_uppercase + "0123456789")
            session.when_completed = self.now()
            amount = Decimal(session.amount)
            fee = self._fee(amount, self.checkout_fee_percent)
            self.balance += amount - fee
            self._book(
                "api_checkout",
                amount - fee,
                fee,
                session.client_reference,
                session.restrict_payer_mobile,
                session.id,
            )
            event = self._event("checkout.session.completed", session)
        self._notify(event)
        return self.view_session(session)

    def fail_payment(
        self, session_id: str, error_code: str = "insufficient-funds", message: str | None = None
    ) -> dict[str, Any]:
        """A payment attempt fails: the session stays open (the customer may try again)."""
        with self._lock:
            session = self.sessions[session_id]
            self._refresh(session)
            if session.checkout_status != "open":
                raise ValueError(f"session {session_id} is {session.checkout_status}")
            session.last_payment_error = {
                "code": error_code,
                "message": message or PAYMENT_ERRORS.get(error_code, error_code),
            }
            event = self._event("checkout.session.payment_failed", session)
        self._notify(event)
        return self.view_session(session)

    def expire(self, session_id: str) -> None:
        """The session's time runs out now (no event: Wave documents none for expiry)."""
        with self._lock:
            session = self.sessions[session_id]
            if session.checkout_status == "open":
                self._close(session, self.now())

    def refuse_refund(self, session_id: str) -> None:
        """Wave cannot refund this session (`checkout-refund-failed`)."""
        with self._lock:
            self._refused_refunds.add(session_id)

    # What tests steer: payouts.

    def outcome_for(self, mobile: str, status: str, error_code: str | None = None) -> None:
        """Payouts to this number end `succeeded`, `failed` (with `error_code`) or stay
        `processing` until settle_payout()."""
        self._outcomes[mobile] = (status, error_code)

    def settle_payout(
        self, payout_id: str, status: str = "succeeded", error_code: str | None = None
    ) -> None:
        with self._lock:
            payout = self.payouts[payout_id]
            if payout.status == "processing":
                self._finish(payout, status, error_code)

    def refuse_reversal(self, payout_id: str, error_code: str = "insufficient-funds") -> None:
        """The reversal of this payout fails (`insufficient-funds`,
        `payout-reversal-account-terminated`, …)."""
        with self._lock:
            self._refused_reversals[payout_id] = error_code

    def fault(self, kind: str, *, times: int = 1, path: str | None = None) -> None:
        with self._lock:
            self._faults.append(Fault(kind, times, path))

    # What tests steer: the wallet's list of transactions, wrong as a real one can be.

    def statement_duplicate(self, client_reference: str) -> None:
        """The movement of this reference made a second time (its own transaction id)."""
        with self._lock:
            item = next(t for t in self.transactions if t["client_reference"] == client_reference)
            again = "T_" + self._token(12, string.ascii_uppercase + "0123456789")
            self.transactions.append(item | {"transaction_id": again})

    def statement_anonymous(self, client_reference: str) -> None:
        """The movement of this reference listed without it (as a payment made outside the
        API would be): only its amount, number and time tell what it was."""
        with self._lock:
            for item in self.transactions:
                if item["client_reference"] == client_reference:
                    item["client_reference"] = None

    def statement_omit(self, client_reference: str) -> None:
        with self._lock:
            self.transactions = [
                t for t in self.transactions if t["client_reference"] != client_reference
            ]

    def statement_amount(self, client_reference: str, amount: str) -> None:
        """The movement of this reference listed with another net `amount`."""
        with self._lock:
            for item in self.transactions:
                if item["client_reference"] == client_reference:
                    item["amount"] = amount

    def statement_own(
        self, amount: str, *, mobile: str, transaction_type: str = "api_checkout"
    ) -> None:
        """A movement the wallet made that Cauri never asked for (a payment through another
        integration of the same wallet)."""
        with self._lock:
            self._book(transaction_type, Decimal(amount), Decimal(0), None, mobile, None)

    def sweep(self, amount: str) -> None:
        """Wave moves `amount` of the wallet to the business's bank account."""
        with self._lock:
            self.balance -= Decimal(amount)
            self._book("merchant_sweep", -Decimal(amount), Decimal(0), None, None, None)

    # Webhooks.

    def signature(
        self, raw: bytes, *, timestamp: int | None = None, secrets_: Iterable[str] | None = None
    ) -> str:
        """`Wave-Signature`: `t=<unix>` then one `v1=<hex>` per secret, each the HMAC-SHA256
        of the timestamp's digits followed by the raw body, keyed with the secret."""
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        keys = list(self.webhook_secrets if secrets_ is None else secrets_)
        digests = [
            hmac.new(k.encode(), stamp.encode() + raw, hashlib.sha256).hexdigest() for k in keys
        ]
        return ",".join([f"t={stamp}", *(f"v1={d}" for d in digests)])

    def send_forged_webhook(
        self,
        body: dict[str, Any] | bytes,
        *,
        secret: str | None = None,
        timestamp: int | None = None,
        signed: bool = True,
        url: str | None = None,
    ) -> int:
        """What someone else can send to the webhook URL: signed with `secret` (by default one
        that is not Wave's), at `timestamp` (by default now), or with no authentication at all
        (`signed=False`). Returns the receiver's HTTP status."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        target = url or self.webhook_url
        assert target is not None, "no webhook URL"
        headers = {"Content-Type": "application/json"}
        if signed:
            key = secret or "wave_sn_WHS_" + self._token(52)
            if self.webhook_auth == "shared_secret":
                headers["Authorization"] = f"Bearer {key}"
            else:
                headers["Wave-Signature"] = self.signature(raw, timestamp=timestamp, secrets_=[key])
        return httpx.post(
            target, content=raw, headers=headers, timeout=CALLBACK_TIMEOUT
        ).status_code

    def posts(self, kind: str) -> list[Received]:
        """Every request of that kind received (checkout, payout, refund, expire, reverse),
        accepted or not, re-sends included."""
        action = _KINDS[kind]
        with self._lock:
            return [r for r in self.requests if r.action == action]

    # The objects as Wave shows them.

    def view_session(self, session: Session) -> dict[str, Any]:
        with self._lock:
            self._refresh(session)
            shown: dict[str, Any] = {
                "id": session.id,
                "amount": session.amount,
                "checkout_status": session.checkout_status,
                "client_reference": session.client_reference,
                "currency": session.currency,
                "error_url": session.error_url,
                "last_payment_error": session.last_payment_error,
                "business_name": self.business_name,
                "payment_status": session.payment_status,
                "transaction_id": session.transaction_id,
                "aggregated_merchant_id": session.aggregated_merchant_id,
                "restrict_payer_mobile": session.restrict_payer_mobile,
                "success_url": session.success_url,
                "wave_launch_url": f"https://pay.wave.com/c/{session.id}",
                "when_completed": _stamp(session.when_completed),
                "when_created": _stamp(session.when_created),
                "when_expires": _stamp(session.when_expires),
            }
            return self._shape(shown)

    def view_payout(self, payout: Payout) -> dict[str, Any]:
        with self._lock:
            shown: dict[str, Any] = {
                "id": payout.id,
                "currency": payout.currency,
                "receive_amount": payout.receive_amount,
                "fee": payout.fee,
                "mobile": payout.mobile,
                "name": payout.name,
                "national_id": payout.national_id,
                "client_reference": payout.client_reference,
                "payment_reason": payout.payment_reason,
                "aggregated_merchant_id": payout.aggregated_merchant_id,
                "status": payout.status,
                "payout_error": (
                    {"error_code": payout.error_code, "error_message": payout.error_message}
                    if payout.error_code
                    else None
                ),
                "timestamp": _stamp(payout.timestamp),
            }
            return self._shape(shown)

    def _shape(self, shown: dict[str, Any]) -> dict[str, Any]:
        if self.absent_fields == "omit":
            return {k: v for k, v in shown.items() if v is not None}
        return shown

    # State changes.

    def _token(self, length: int, alphabet: str = _ALNUM) -> str:
        return "".join(secrets.choice(alphabet) for _ in range(length))

    def _fee(self, amount: Decimal, percent: Decimal) -> Decimal:
        step = Decimal("1") if self.currency in ZERO_DECIMAL_CURRENCIES else Decimal("0.01")
        return (amount * percent / 100).quantize(step, rounding=ROUND_HALF_UP)

    def _refresh(self, session: Session) -> None:
        if session.checkout_status == "open" and self.now() >= session.when_expires:
            self._close(session, session.when_expires)

    def _close(self, session: Session, at: float) -> None:
        session.checkout_status, session.payment_status = "expired", "cancelled"
        session.when_completed = at

    def _finish(self, payout: Payout, status: str, error_code: str | None) -> None:
        payout.status = status
        if status == "succeeded":
            fee = Decimal(payout.fee)
            self._book(
                "api_payout", -payout.total, fee, payout.client_reference, payout.mobile, None
            )
        if status == "failed":
            payout.error_code = error_code or "internal-server-error"
            payout.error_message = PAYOUT_ERRORS.get(payout.error_code, payout.error_code)
            self.balance += payout.total

    def _book(
        self,
        transaction_type: str,
        delta: Decimal,
        fee: Decimal,
        client_reference: str | None,
        mobile: str | None,
        session_id: str | None,
        *,
        reversal: bool = False,
    ) -> None:
        self._booked_balance += delta
        self.transactions.append(
            {
                "timestamp": _stamp(self.now()),
                "transaction_id": "T_" + self._token(12, string.ascii_uppercase + "0123456789"),
                "transaction_type": transaction_type,
                "amount": _money(delta),
                "fee": _money(fee),
                "balance": _money(self._booked_balance),
                "currency": self.currency,
                "is_reversal": reversal,
                "counterparty_mobile": mobile,
                "client_reference": client_reference,
                "checkout_api_session_id": session_id,
            }
        )

    def _transactions(self, query: dict[str, str]) -> Answer:
        day = query.get("date") or datetime.fromtimestamp(self.now(), UTC).date().isoformat()
        try:
            date.fromisoformat(day)
        except ValueError:
            return _invalid("date", "invalid date format")
        of_day = [t for t in self.transactions if str(t["timestamp"]).startswith(day)]
        start = int(query["after"]) if query.get("after", "").isdigit() else 0
        page = of_day[start : start + self.transactions_page_size]
        end = start + len(page)
        return 200, {
            "page_info": {
                "start_cursor": str(start),
                "end_cursor": str(end),
                "has_next_page": end < len(of_day),
            },
            "date": day,
            "items": [self._shape(item) for item in page],
        }

    def _event(self, kind: str, session: Session) -> dict[str, Any]:
        event = {
            "id": "EV_" + self._token(12, string.ascii_letters + string.digits),
            "type": kind,
            "data": self.view_session(session),
        }
        self.events.append(event)
        return event

    def _notify(self, event: dict[str, Any]) -> None:
        """The event, per `webhook_mode`, off the caller's thread."""
        if self.webhook_url is None:
            return
        mode = self.webhook_mode
        if mode == "drop":
            return
        if mode == "reorder":
            with self._lock:
                if not self._held_back:
                    self._held_back.append(event)
                    return
                batch = [event, *self._held_back]
                self._held_back = []
        else:
            batch = [event] * (2 if mode == "duplicate" else 1)
        delay = self.webhook_delay if mode == "delay" else 0.0
        threading.Timer(delay, self._deliver_all, args=(batch,)).start()

    def _deliver_all(self, batch: list[dict[str, Any]]) -> None:
        for event in batch:
            self._deliver(event)

    def _deliver(self, event: dict[str, Any]) -> None:
        """Posts the event until the receiver answers 2xx or the re-sends are spent."""
        raw = json.dumps(event, separators=(",", ":")).encode()
        pauses = [0.0, *self.webhook_retry_delays]
        for attempt, pause in enumerate(pauses, start=1):
            if pause and self._stopping.wait(pause):
                return
            headers = {"Content-Type": "application/json"}
            if self.webhook_auth == "shared_secret":
                headers["Authorization"] = f"Bearer {self.webhook_secrets[0]}"
            else:
                headers["Wave-Signature"] = self.signature(raw)
            status: int | None = None
            with contextlib.suppress(httpx.HTTPError):
                assert self.webhook_url is not None
                status = httpx.post(
                    self.webhook_url, content=raw, headers=headers, timeout=self.webhook_timeout
                ).status_code
            with self._lock:
                self.deliveries.append(Delivery(event, attempt, status, time.time(), headers))
            if status is not None and 200 <= status < 300:
                return

    def _take_fault(self, method: str, path: str, action: str) -> str | None:
        with self._lock:
            for fault in self._faults:
                if fault.times <= 0:
                    continue
                if fault.path is not None:
                    applies = fault.path in path
                elif fault.kind == "rate_limit":
                    applies = True
                else:
                    applies = action in ("create_session", "create_payout")
                if applies:
                    fault.times -= 1
                    return fault.kind
        return None

    # The API's answers (called under the lock).

    def _create_session(self, body: Any, headers: dict[str, str]) -> Answer:
        if not isinstance(body, dict):
            return _invalid("body", "value is not a valid dict", "type_error.dict")
        key = headers.get("idempotency-key") if self.checkout_idempotency else None
        if key is not None and key in self._session_idempotency:
            previous, session_id = self._session_idempotency[key]
            if previous != body:
                return _error(409, "idempotency-mismatch", "The request doesn't match the key.")
            return 200, self.view_session(self.sessions[session_id])
        for name in ("amount", "currency", "error_url", "success_url"):
            if name not in body:
                return _invalid(name, "field required", "value_error.missing")
        refused = self._check_amount(body["amount"], body["currency"], "amount")
        if refused is not None:
            return refused
        for name in ("success_url", "error_url"):
            url = body[name]
            if not isinstance(url, str) or not url.startswith("https://") or len(url) <= 8:
                return _invalid(name, "URL scheme should be 'https'")
        reference = body.get("client_reference")
        if reference is not None and (not isinstance(reference, str) or len(reference) > 255):
            return _invalid("client_reference", "ensure this value has at most 255 characters")
        restricted = body.get("restrict_payer_mobile")
        if restricted is not None and not (
            isinstance(restricted, str) and _MOBILE.match(restricted)
        ):
            return _invalid("restrict_payer_mobile", "Invalid phone number.")
        merchant = body.get("aggregated_merchant_id")
        if merchant is not None and merchant not in self.aggregated_merchants:
            return _error(
                400, "invalid-aggregated-merchant-id", "This aggregated merchant id can't be used."
            )
        now = self.now()
        session = Session(
            id="cos-" + self._token(13),
            amount=body["amount"],
            currency=body["currency"],
            success_url=body["success_url"],
            error_url=body["error_url"],
            client_reference=reference,
            restrict_payer_mobile=restricted,
            aggregated_merchant_id=merchant,
            when_created=now,
            when_expires=now + self.session_ttl,
        )
        self.sessions[session.id] = session
        if key is not None:
            self._session_idempotency[key] = (body, session.id)
        return 200, self.view_session(session)

    def _check_amount(self, amount: Any, currency: Any, loc: str) -> Answer | None:
        if not isinstance(currency, str) or not _CURRENCY.match(currency):
            return _invalid(
                "currency",
                f"Unknown currency identifier: {currency}. We require the currency to be a "
                "three-letter ISO 4217 code.",
            )
        if not isinstance(amount, str) or not _AMOUNT.match(amount):
            return _invalid(loc, "Invalid amount: a string such as '1000' is required.")
        if currency in ZERO_DECIMAL_CURRENCIES and "." in amount:
            return _invalid(loc, f"{currency} amounts can't have decimals.")
        try:
            if Decimal(amount) <= 0:
                return _invalid(loc, "The amount must be positive.")
        except InvalidOperation:
            return _invalid(loc, "Invalid amount.")
        if currency != self.currency:
            return _error(
                400, "currency-mismatch", f"The currency {currency} doesn't match your wallet."
            )
        return None

    def _session(self, session_id: str) -> Session | Answer:
        session = self.sessions.get(session_id)
        if session is None:
            return _error(404, "checkout-session-not-found", "Checkout session not found.")
        self._refresh(session)
        return session

    def _expire(self, session_id: str) -> Answer:
        session = self._session(session_id)
        if not isinstance(session, Session):
            return session
        if session.checkout_status != "open":
            state = session.checkout_status
            return _error(409, EXPIRE_CONFLICT, f"The checkout session is {state}.")
        self._close(session, self.now())
        return 200, None

    def _refund(self, session_id: str) -> Answer:
        session = self._session(session_id)
        if not isinstance(session, Session):
            return session
        session.refund_requests += 1
        if session.refunded:
            return 200, None
        amount = Decimal(session.amount)
        if (
            session.payment_status != "succeeded"
            or session_id in self._refused_refunds
            or self.balance < amount
        ):
            return _error(400, "checkout-refund-failed", "Can't refund the checkout session.")
        session.refunded = True
        self.balance -= amount  # the customer gets the whole amount back, fee included
        self._book(
            "api_checkout_refund",
            -amount,
            Decimal(0),
            session.client_reference,
            session.restrict_payer_mobile,
            session.id,
        )
        return 200, None

    def _create_payout(self, body: Any, headers: dict[str, str]) -> Answer:
        key = headers.get("idempotency-key")
        if not key:
            return _error(
                400,
                "request-validation-error",
                "An 'Idempotency-Key' header is required for POST requests",
            )
        if len(key) > 255:
            return _invalid("Idempotency-Key", "ensure this value has at most 255 characters")
        if not isinstance(body, dict):
            return _invalid("body", "value is not a valid dict", "type_error.dict")
        if key in self._idempotency:
            previous, payout_id = self._idempotency[key]
            if previous != body:
                return _error(
                    409,
                    "idempotency-mismatch",
                    "This Idempotency-Key was used before with a different request.",
                )
            return 200, self.view_payout(self.payouts[payout_id])
        for name in ("currency", "receive_amount", "mobile"):
            if name not in body:
                return _invalid(name, "field required", "value_error.missing")
        refused = self._check_amount(body["receive_amount"], body["currency"], "receive_amount")
        if refused is not None:
            return refused
        mobile = body["mobile"]
        if not isinstance(mobile, str) or not _MOBILE.match(mobile):
            return _invalid("mobile", "Invalid phone number.")
        if self.calling_code is not None and not mobile.startswith(self.calling_code):
            return _error(
                400, "country-mismatch", "The recipient must be in the same country as you."
            )
        for name, limit in (
            ("name", 255),
            ("national_id", 255),
            ("client_reference", 255),
            ("payment_reason", 40),
        ):
            value = body.get(name)
            if value is not None and (not isinstance(value, str) or len(value) > limit):
                return _invalid(name, f"ensure this value has at most {limit} characters")
        merchant = body.get("aggregated_merchant_id")
        if merchant is not None and merchant not in self.aggregated_merchants:
            return _error(
                400, "invalid-aggregated-merchant-id", "This aggregated merchant id can't be used."
            )
        amount = Decimal(body["receive_amount"])
        fee = self._fee(amount, self.payout_fee_percent)
        if self.balance < amount + fee and self.insufficient_funds_as == "error":
            return _error(422, "insufficient-funds")
        payout = Payout(
            id="pt-" + self._token(13),
            currency=body["currency"],
            receive_amount=body["receive_amount"],
            fee=_money(fee),
            mobile=mobile,
            name=body.get("name"),
            national_id=body.get("national_id"),
            client_reference=body.get("client_reference"),
            payment_reason=body.get("payment_reason"),
            aggregated_merchant_id=merchant,
            timestamp=self.now(),
            idempotency_key=key,
        )
        self.payouts[payout.id] = payout
        self._idempotency[key] = (body, payout.id)
        if self.balance < payout.total:
            payout.status = "failed"
            payout.error_code = "insufficient-funds"
            payout.error_message = PAYOUT_ERRORS["insufficient-funds"]
            return 200, self.view_payout(payout)
        self.balance -= payout.total
        status, code = self._outcomes.get(mobile, ("succeeded", None))
        if not self.hold and status != "processing":
            self._finish(payout, status, code)
        return 200, self.view_payout(payout)

    def _reverse(self, payout_id: str) -> Answer:
        payout = self.payouts.get(payout_id)
        if payout is None:
            return _error(404, "not-found", "No payout was found on the wallet of your API key.")
        if payout.status == "reversed":
            return 200, None
        if payout.status != "succeeded":
            return _error(422, "request-validation-error", "Only a succeeded payout is reversible.")
        if self.now() - payout.timestamp > REVERSAL_WINDOW:
            return _error(422, "payout-reversal-time-limit-exceeded")
        refusal = self._refused_reversals.get(payout_id)
        if refusal is not None:
            return _error(422, refusal)
        payout.status = "reversed"
        self.balance += payout.total
        self._book(
            "api_payout_reversal",
            payout.total,
            Decimal(0),
            payout.client_reference,
            payout.mobile,
            None,
            reversal=True,
        )
        return 200, None

    def _answer_get(self, action: str, ident: str | None, query: dict[str, str]) -> Answer:
        if action == "get_session":
            assert ident is not None
            session = self._session(ident)
            return (200, self.view_session(session)) if isinstance(session, Session) else session
        if action == "session_by_transaction":
            transaction = query.get("transaction_id")
            if not transaction:
                return _invalid("transaction_id", "field required", "value_error.missing")
            for session in self.sessions.values():
                if session.transaction_id == transaction:
                    return 200, self.view_session(session)
            return _error(404, "checkout-session-not-found", "Checkout session not found.")
        if action in ("search_sessions", "search_payouts"):
            reference = query.get("client_reference")
            if not reference:
                return _invalid("client_reference", "field required", "value_error.missing")
            if action == "search_sessions":
                found = [
                    self.view_session(s)
                    for s in self.sessions.values()
                    if s.client_reference == reference
                ]
            else:
                found = [
                    self.view_payout(p)
                    for p in self.payouts.values()
                    if p.client_reference == reference
                ]
            return 200, {"result": found}
        if action == "get_payout":
            payout = self.payouts.get(ident or "")
            if payout is None:
                return _error(404, "not-found", "No payout with this id on your wallet.")
            return 200, self.view_payout(payout)
        if action == "transactions":
            return self._transactions(query)
        return 200, {"amount": _money(self.balance), "currency": self.currency}

    # HTTP.

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def _answer(self, status: int, body: dict[str, Any] | None = None) -> None:
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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

            def _route(self, path: str) -> tuple[str | None, str | None, str | None, bool]:
                """(action, id, permission, path known under another method)."""
                known = False
                for method, pattern, action, permission in _ROUTES:
                    match = pattern.match(path)
                    if match is None:
                        continue
                    if method != self.command:
                        known = True
                        continue
                    return action, (match.group(1) if match.groups() else None), permission, True
                return None, None, None, known

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parsed: Any = None
                parse_failed = False
                if raw:
                    try:
                        parsed = json.loads(raw)
                    except ValueError:
                        parsed, parse_failed = raw.decode("utf-8", "replace"), True
                split = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(split.query).items()}
                action, ident, permission, known = self._route(split.path)
                headers = {k.lower(): v for k, v in self.headers.items()}
                with fake._lock:
                    fake.requests.append(
                        Received(self.command, self.path, headers, parsed, raw, time.time(), action)
                    )
                if action is None:
                    if known:
                        self._answer(*_error(405, "method-not-allowed", "No such method."))
                    else:
                        self._answer(*_error(404, "not-found", "No such endpoint."))
                    return
                fault = fake._take_fault(self.command, split.path, action)
                if fault == "hang":
                    self._hang()
                    return
                if fault == "error_500":
                    self._answer(*_error(500, "internal-server-error"))
                    return
                if fault == "rate_limit":
                    self._answer(
                        429,
                        {
                            "code": "too-many-requests",
                            "message": "You sent more requests than we can handle right now.",
                        },
                    )
                    return
                refused = self._refusal(headers, raw, permission, action)
                if refused is None and self.command == "POST" and action.startswith("create"):
                    refused = self._body_refusal(headers, raw, parse_failed)
                if refused is not None:
                    self._answer(*refused)
                    return
                with fake._lock:
                    if action == "create_session":
                        status, body = fake._create_session(parsed, headers)
                    elif action == "create_payout":
                        status, body = fake._create_payout(parsed, headers)
                    elif action == "expire":
                        status, body = fake._expire(ident or "")
                    elif action == "refund":
                        status, body = fake._refund(ident or "")
                    elif action == "reverse":
                        status, body = fake._reverse(ident or "")
                    else:
                        status, body = fake._answer_get(action, ident, query)
                if fault == "error_500_after_accept":
                    self._answer(*_error(500, "internal-server-error"))
                elif fault == "reset_after_accept":
                    self._reset()
                elif fault == "hang_after_accept":
                    self._hang()
                else:
                    self._answer(status, body)

            def _refusal(
                self, headers: dict[str, str], raw: bytes, permission: str | None, action: str
            ) -> Answer | None:
                header = headers.get("authorization")
                if header is None:
                    return _error(401, "missing-auth-header", AUTH_MESSAGES["missing-auth-header"])
                scheme, _, value = header.partition(" ")
                if scheme.lower() != "bearer":
                    return _error(401, "invalid-auth", AUTH_MESSAGES["invalid-auth"])
                value = value.strip()
                if not value:
                    code = "api-key-not-provided"
                    return _error(401, code, AUTH_MESSAGES[code])
                with fake._lock:
                    key = fake.keys.get(value)
                if key is None:
                    return _error(401, "no-matching-api-key", AUTH_MESSAGES["no-matching-api-key"])
                if key.revoked:
                    return _error(401, "api-key-revoked", AUTH_MESSAGES["api-key-revoked"])
                signing = fake.request_signing_secret
                if signing is not None:
                    refused = self._signature_refusal(headers, raw, signing)
                    if refused is not None:
                        return refused
                if permission not in key.permissions:
                    return _error(403, *fake.permission_error)
                if fake.wallet_disabled and action != "balance":
                    return _error(
                        403,
                        "disabled-wallet",
                        "Your wallet has been temporarily disabled. You can still use this "
                        "endpoint to check your balance.",
                    )
                return None

            def _signature_refusal(
                self, headers: dict[str, str], raw: bytes, secret: str
            ) -> Answer | None:
                header = headers.get("wave-signature")
                if header is None:
                    return _error(401, "missing-signature", "A Wave-Signature header is required.")
                parts = [p.strip().partition("=") for p in header.split(",")]
                stamps = [v for k, _, v in parts if k == "t"]
                signatures = [v for k, _, v in parts if k == "v1"]
                if len(stamps) != 1 or not signatures:
                    return _error(401, "invalid-signature-format", "Expected t=…,v1=….")
                if not stamps[0].isdigit():
                    return _error(401, "invalid-signature-timestamp", "Invalid timestamp.")
                age = time.time() - int(stamps[0])
                if age > 300 or age < -30:
                    return _error(401, "expired-signature-timestamp", "Timestamp out of range.")
                expected = hmac.new(
                    secret.encode(), stamps[0].encode() + raw, hashlib.sha256
                ).hexdigest()
                if not any(hmac.compare_digest(expected, s) for s in signatures):
                    return _error(401, "invalid-signature", "The signature doesn't match.")
                return None

            def _body_refusal(
                self, headers: dict[str, str], raw: bytes, parse_failed: bool
            ) -> Answer | None:
                if not raw or "application/json" not in headers.get("content-type", ""):
                    return _error(
                        400, "request-not-json", "The request has no JSON body or content type."
                    )
                if parse_failed:
                    return _error(400, "request-parsing-error", "The JSON body can't be parsed.")
                return None

        return Handler


# Run on its own (`python -m tests.fakes.wave`): a rehearsal of a connector's set-up.

REHEARSAL_API_KEY = "wave_sn_prod_" + "FakeKeyOfTheRehearsalWallet00001"
REHEARSAL_WEBHOOK_SECRET = "wave_sn_WHS_" + "fakesecretoftherehearsalwebhook0123456789abcdef"


def rehearsal(options: runner.Options) -> runner.Rehearsal:
    fake = WaveFake(
        REHEARSAL_API_KEY,
        webhook_secret=REHEARSAL_WEBHOOK_SECRET,
        webhook_url=options.callback_url,
        host=options.host,
        port=options.port,
    )

    def waiting() -> list[str]:
        with fake._lock:
            return [s.id for s in fake.sessions.values() if s.checkout_status == "open"]

    def act(session_id: str, pays: bool) -> object:
        return fake.pay(session_id) if pays else fake.fail_payment(session_id)

    return runner.Rehearsal(
        fake=fake,
        kind="wave",
        environment="production",  # Wave has no sandbox; http is allowed on loopback
        base_url=fake.base_url,
        settings={"return_url": "https://shop.example/merci"},
        secrets={"api_key": REHEARSAL_API_KEY, "webhook_secret": REHEARSAL_WEBHOOK_SECRET},
        routes={"wave_sn": ("collect", "disburse", "refund")},
        payment={"amount": 5000, "operator": "wave_sn", "phone_number": "221771234567"},
        callbacks=f"checkout webhooks POSTed to {options.callback_url}, signed with the "
        "webhook secret, as registered in Wave's portal (--cauri, --name or --callback-url "
        "to change it)",
        customer=runner.Customer(waiting, act),
        notes=(
            "the Wave app's side is scripted (--customer): each checkout session is paid "
            "(or declined) within a second; payouts succeed at once",
        ),
    )


if __name__ == "__main__":
    raise SystemExit(
        runner.main(
            rehearsal,
            description="Wave's Checkout and Payout APIs' contract fake, on its own.",
            name="wave-fake",
            customer=True,
        )
    )
