"""A contract fake of CinetPay's Checkout API v2 (payments, hosted page, notifications) and of
its Transfer API v1 (payouts), over real HTTP on loopback, for the CinetPay connector's
end-to-end tests. It reproduces what CinetPay documents (facts and sources in
docs/research/cinetpay.md); it is not shaped to Cauri. Both of CinetPay's hosts are served on
one port: point the connector's checkout base (`https://api-checkout.cinetpay.com`) and transfer
base (`https://client.cinetpay.com`) at `base_url`.

Reproduced:
- `POST /v2/payment` (JSON): `apikey` (609 AUTH_NOT_FOUND), `site_id` (613
  ERROR_SITE_ID_NOTVALID), `transaction_id`, `amount` (an integer, 611 ERROR_AMOUNT_TYPE; a
  multiple of 5 except in USD, 628 ERROR_AMOUNT_FORMAT; a minimum per currency, 641
  ERROR_AMOUNT_TOO_LOW), `currency` XOF | XAF | GNF | CDF | USD (612 ERROR_CURRENCY_NOTVALID),
  `description`, `notify_url`, `return_url` (608 MINIMUM_REQUIRED_FIELDS when one is missing,
  with a `description` naming it), `channels` ALL | MOBILE_MONEY | CREDIT_CARD | WALLET (default
  ALL), `lang` fr | en (615 ERROR_LANGUAGE_NOTVALID), `metadata`, `invoice_data`,
  `lock_phone_number` (with `customer_phone_number`), the `customer_*` fields the card option
  needs (608 for CREDIT_CARD without them; 624 for card fields without `customer_address` and
  `customer_city`); answer `{code: "201", message: "CREATED", description, data:
  {payment_token, payment_url}, api_response_id}`;
- the hosted page at `payment_url` (`GET /payment/{token}`): a form `#pay-form` (select
  `#payment_method`, inputs `#phone_prefix` and `#phone_number`, button `#pay` « Payer »), a
  form `#cancel-form` (button `#cancel` « Annuler ») and a form `#refuse-form` (button
  `#refuse` « Simuler un échec »); once the payment is decided, a page with the form
  `#return-form` (button `#return` « Retour au site marchand ») that takes the browser back to
  `return_url` by POST with `transaction_id` and `token` (auto-submitted unless
  `auto_return = False`; `return_method = "GET"` appends them to the URL instead);
- `POST /v2/payment/check` with `apikey`, `site_id` and `transaction_id` or `token`: `{code,
  message, data: {amount, currency, status, payment_method, description, metadata,
  operator_id, payment_date, fund_availability_date}, api_response_id}` with code 00 SUCCES
  (ACCEPTED), 662 WAITING_CUSTOMER_PAYMENT / 623 / 663 / 664 (WAITING_FOR_CUSTOMER), 600
  PAYMENT_FAILED / 602 / 604 / 606 (REFUSED), 627 TRANSACTION_CANCEL (REFUSED);
- notifications to `notify_url`: a GET ping, then a form POST of `cpm_site_id`,
  `cpm_trans_id`, `cpm_trans_date`, `cpm_amount`, `cpm_currency`, `signature`,
  `payment_method`, `cel_phone_num`, `cpm_phone_prefixe`, `cpm_language`, `cpm_version`,
  `cpm_payment_config`, `cpm_page_action`, `cpm_custom`, `cpm_designation`,
  `cpm_error_message`, with the header `x-token`: the hex HMAC-SHA256, keyed with the account's
  secret key, of those sixteen values concatenated in that order; modes send | drop | delay |
  duplicate | reorder; forged ones (`send_forged_notification`);
- the Transfer API: `/v1/auth/login` (form `apikey`, `password`; 701 INVALID_CREDENTIALS; a
  token living `token_ttl` = 5 min, then 705 EXPIRED_TOKEN; 706 INVALID_TOKEN), every other call
  with `?token=…&lang=…`; `POST /v1/transfer/contact` (form `data`: a JSON list of `{prefix,
  phone, name, surname, email}`; 726 ERROR_PHONE_ALREADY_MY_CONTACT per contact);
  `POST /v1/transfer/money/send/contact` (form `data`: a JSON list of `{prefix, phone, amount,
  client_transaction_id, notify_url, payment_method?}`; 724 ERROR_PHONE_NOT_MY_CONTACT, 805
  CLIENT_TRANSACTION_ID_EXIST, 725 MISSING_NOTIFY_URL, 801 INVALID_AMOUNT, 719
  AMOUNT_TOO_SMALL, 802 INVALID_PHONE, 718 JSON_PARSE_ERROR, 704 INVALID_PARAM, 602
  INSUFFICIENT_BALANCE); `GET /v1/transfer/check/money?client_transaction_id=…` (or
  `transaction_id`; 723 NOT_FOUND); `GET /v1/transfer/check/balance` (`{amount, inUsing,
  available}`); `treatment_status` NEW → (REC, NOS) → VAL | REJ, steerable per phone number
  (`outcome_for`) or held (`hold`, then `settle_transfer`); a form POST of `transaction_id`,
  `client_transaction_id`, `lot`, `amount`, `receiver`, `sending_status`, `comment`,
  `treatment_status`, `operator_transaction_id`, `validated_at` to the transfer's
  `notify_url` (unsigned: CinetPay documents no signature for transfers), same modes;
  708 NOT_ALLOWED for a transfer path under the wrong method;
- faults for the next API requests: hang, 500 before or after the request is accepted, a
  connection reset or a hang after it is accepted, 429 (`rate_limit`).
Not reproduced: the card bank's 3-D Secure pages, OTP entry, the CinetPay wallet universe,
`invoice_data` rendering, payment expiry, notification retries (CinetPay documents none),
contact listing, airtime and SMS APIs, the newer `api.cinetpay.net` v1 sandbox API.
Unclear in the docs, chosen here (see docs/research/cinetpay.md): the HTTP status of refusals
(`refusal_status`, 400), the code of a reused `transaction_id` (624), of an amount that is not a
multiple of 5 (628), of an unknown transaction at check time (624), the shape of the send
answer (`data: [[…]]` like the contact answer) and `sending_status` values (PENDING, CONFIRM).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import html
import json
import re
import secrets
import socket
import string
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx

from tests.fakes import CALLBACK_TIMEOUT, runner

CURRENCIES = ("XOF", "XAF", "GNF", "CDF", "USD")
CHANNELS = ("ALL", "MOBILE_MONEY", "CREDIT_CARD", "WALLET")
LANGUAGES = ("fr", "en")
# Minimum amounts found for the legacy form API (secondary); GNF has none documented.
MINIMUM_AMOUNTS = {
    "XOF": Decimal(100),
    "XAF": Decimal(100),
    "CDF": Decimal(400),
    "USD": Decimal("0.2"),
}
# The card option needs these (the initialisation page's card table).
CARD_FIELDS = (
    "customer_name",
    "customer_surname",
    "customer_email",
    "customer_phone_number",
    "customer_address",
    "customer_city",
    "customer_country",
    "customer_state",
    "customer_zip_code",
)
# `payment_method` codes per currency (the code table's country list, as far as it was read).
MOBILE_METHODS = {
    "XOF": (
        "OM",
        "MOMO",
        "FLOOZ",
        "WAVECI",
        "OMML",
        "MOOVML",
        "OMSN",
        "FREESN",
        "WAVESN",
        "EXPRESSOSN",
        "TMONEYTG",
        "FLOOZTG",
        "OMBF",
        "MOOVBF",
    ),
    "XAF": ("OMCM", "MOMOCM", "EXPRESSUNIONCM"),
}
CARD_METHODS = {"XOF": ("VISAM",), "XAF": ("VISAMCM",)}
DEFAULT_MOBILE = ("OM", "MOMO")  # currencies whose method list was not read (GNF, CDF, USD)
CARD_CODES = {"VISAM", "VISAMCM", "VISA", "MASTERCARD"}  # VISA/MASTERCARD: steering aliases
CALLING_CODES = {"XOF": "225", "XAF": "237", "GNF": "224", "CDF": "243", "USD": "243"}

CHECKOUT_MESSAGES = {
    "00": "SUCCES",
    "201": "CREATED",
    "600": "PAYMENT_FAILED",
    "602": "INSUFFICIENT_BALANCE",
    "603": "SERVICE_UNAVAILABLE",
    "604": "OTP_CODE_ERROR",
    "606": "INCORRECT_SETTINGS",
    "608": "MINIMUM_REQUIRED_FIELDS",
    "609": "AUTH_NOT_FOUND",
    "611": "ERROR_AMOUNT_TYPE",
    "612": "ERROR_CURRENCY_NOTVALID",
    "613": "ERROR_SITE_ID_NOTVALID",
    "615": "ERROR_LANGUAGE_NOTVALID",
    "623": "WAITING_CUSTOMER_TO_VALIDATE",
    "624": "UNKNOWN_ERROR",
    "627": "TRANSACTION_CANCEL",
    "628": "ERROR_AMOUNT_FORMAT",
    "641": "ERROR_AMOUNT_TOO_LOW",
    "642": "ERROR_AMOUNT_TOO_HIGH",
    "662": "WAITING_CUSTOMER_PAYMENT",
    "663": "WAITING_CUSTOMER_OTP_CODE",
    "664": "WAITING_CUSTOMER_PAYMENT_AT_OPERATOR_SIDE",
}
WAITING_CODES = {"623", "662", "663", "664"}
REFUSED_CODES = {"600", "602", "603", "604", "606", "627"}

TRANSFER_MESSAGES = {
    0: ("OPERATION_SUCCES", "Operation successfully completed"),
    -1: ("OPERATION_ERROR", "Errors in the execution of the request,check the query format"),
    701: ("INVALID_CREDENTIALS", "Identifiant de connexion incorrect"),
    704: ("INVALID_PARAM", "The parameters sent are not correct"),
    705: ("EXPIRED_TOKEN", "The token has expired"),
    706: ("INVALID_TOKEN", "Votre token est invalide"),
    708: ("NOT_ALLOWED", "You are not allowed to visit the link"),
    718: ("JSON_PARSE_ERROR", "The emitted JSON contains errors"),
    719: ("AMOUNT_TOO_SMALL", "The amount must be above the threshold"),
    720: ("AMOUNT_TOO_LARGE", "The amount must be less than the threshold"),
    602: ("INSUFFICIENT_BALANCE", "Your CinetPay transfer balance is insufficient"),
    723: ("NOT_FOUND", "No results for this search"),
    724: ("ERROR_PHONE_NOT_MY_CONTACT", "The phone number is not in your CinetPay contacts"),
    725: ("MISSING_NOTIFY_URL", "Vous devez mentionner une url de notification valide"),
    726: ("ERROR_PHONE_ALREADY_MY_CONTACT", "The phone number is already in your contacts"),
    801: ("INVALID_AMOUNT", "The amount entered is invalid"),
    802: ("INVALID_PHONE", "The telephone number entered is invalid"),
    805: ("CLIENT_TRANSACTION_ID_EXIST", "Your transaction ID already exists on CinetPay"),
}
TREATMENT_STATUSES = ("NEW", "REC", "NOS", "VAL", "REJ")
FINAL_TREATMENT = {"VAL", "REJ"}

# The order CinetPay concatenates the notification's fields in, for the x-token HMAC.
X_TOKEN_FIELDS = (
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
TRANSFER_NOTIFICATION_FIELDS = (
    "transaction_id",
    "client_transaction_id",
    "lot",
    "amount",
    "receiver",
    "sending_status",
    "comment",
    "treatment_status",
    "operator_transaction_id",
    "validated_at",
)

_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("POST", re.compile(r"^/v2/payment/?$"), "payment"),
    ("POST", re.compile(r"^/v2/payment/check/?$"), "check"),
    ("GET", re.compile(r"^/payment/([^/]+)/?$"), "page"),
    ("POST", re.compile(r"^/payment/([^/]+)/pay/?$"), "page_pay"),
    ("POST", re.compile(r"^/payment/([^/]+)/cancel/?$"), "page_cancel"),
    ("POST", re.compile(r"^/payment/([^/]+)/refuse/?$"), "page_refuse"),
    ("POST", re.compile(r"^/v1/auth/login/?$"), "login"),
    ("GET", re.compile(r"^/v1/auth/login/?$"), "login"),
    ("POST", re.compile(r"^/v1/transfer/contact/?$"), "contact"),
    ("POST", re.compile(r"^/v1/transfer/money/send/contact/?$"), "transfer"),
    ("GET", re.compile(r"^/v1/transfer/check/money/?$"), "transfer_check"),
    ("GET", re.compile(r"^/v1/transfer/check/balance/?$"), "balance"),
]
_PHONE = re.compile(r"^[0-9]{6,15}$")
_PREFIX = re.compile(r"^[0-9]{1,4}$")

Answer = tuple[int, dict[str, Any]]


def x_token(fields: Mapping[str, Any], secret: str) -> str:
    """The `x-token` of a payment notification: HMAC-SHA256 (hex), keyed with the secret key,
    of the sixteen documented fields' values concatenated in their documented order (a missing
    field counts as the empty string)."""
    data = "".join(str(fields.get(name) or "") for name in X_TOKEN_FIELDS)
    return hmac.new(secret.encode(), data.encode(), hashlib.sha256).hexdigest()


def _stamp(at: float) -> str:
    return datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S")


def _digits(value: Any) -> str:
    return re.sub(r"\D", "", str(value or ""))


@dataclass
class Received:
    method: str
    path: str  # with its query string
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, else the form as a dict, else the text, else None
    raw: bytes
    at: float
    action: str | None  # payment, check, page, page_pay, login, contact, transfer, …


@dataclass
class Payment:
    transaction_id: str
    token: str
    body: dict[str, Any]
    amount: Decimal
    currency: str
    description: str
    notify_url: str
    return_url: str
    channels: str
    lang: str
    metadata: str | None
    created_at: float
    signature: str
    status: str = "WAITING_FOR_CUSTOMER"  # WAITING_FOR_CUSTOMER | ACCEPTED | REFUSED
    code: str = "662"
    payment_method: str = ""
    phone_prefix: str = ""
    phone_number: str = ""
    operator_id: str | None = None
    payment_date: float | None = None
    touched: bool = False  # the customer acted (paid, refused, cancelled, is confirming)
    notifications_sent: int = 0

    @property
    def final(self) -> bool:
        return self.status in ("ACCEPTED", "REFUSED")

    @property
    def card_option(self) -> bool:
        return self.channels in ("ALL", "CREDIT_CARD") and all(
            self.body.get(name) for name in CARD_FIELDS
        )


@dataclass
class Transfer:
    transaction_id: str
    client_transaction_id: str
    lot: str
    prefix: str
    phone: str
    amount: int
    notify_url: str
    payment_method: str | None
    created_at: float
    treatment_status: str = "NEW"
    sending_status: str = "PENDING"
    comment: str = ""
    operator_transaction_id: str | None = None
    validated_at: float | None = None
    notifications_sent: int = 0


@dataclass
class Contact:
    prefix: str
    phone: str
    name: str
    surname: str
    email: str
    lot: str


@dataclass
class Fault:
    # hang | error_500 | error_500_after_accept | reset_after_accept | hang_after_accept |
    # rate_limit
    kind: str
    times: int
    path: str | None  # a substring of the path it applies to; None: any API request


@dataclass
class Delivery:
    kind: str  # payment | transfer | ping
    url: str
    fields: dict[str, str]
    headers: dict[str, str]
    status: int | None  # the receiver's answer; None when it could not be reached
    at: float = field(default_factory=time.time)


class CinetPayFake:
    def __init__(
        self,
        *,
        apikey: str,
        site_id: str,
        secret_key: str,
        transfer_password: str,
        transfer_balance: int = 1_000_000,
        token_ttl: float = 300.0,
        host: str = "127.0.0.1",  # loopback; a port of 0 is a free one
        port: int = 0,
    ) -> None:
        self.apikey, self.site_id, self.secret_key = apikey, str(site_id), secret_key
        self.transfer_password = transfer_password
        self.token_ttl = token_ttl
        self.available = Decimal(transfer_balance)  # the transfer account's free funds
        self.in_using = Decimal(0)  # sent, not yet final
        self.transfer_min_amount = 100  # per country in reality ("consult the tranches")
        self.transfer_max_amount = 1_500_000
        self.refusal_status = 400  # HTTP status of refusals: the docs show bodies only
        self.auto_return = True  # the result page submits itself to return_url
        self.return_method = "POST"  # or "GET"
        self.ping_notify_url = True  # a GET on notify_url before each notification
        self.notify_waiting = False  # also notify WAITING_FOR_CUSTOMER (push operators)
        self.notify_mode = "send"  # send | drop | delay | duplicate | reorder
        self.notify_delay = 0.5
        self.hold = False  # transfers stay NEW until settle_transfer()
        self.requests: list[Received] = []
        self.payments: dict[str, Payment] = {}  # by transaction_id
        self.transfers: dict[str, Transfer] = {}  # by client_transaction_id
        self.contacts: dict[tuple[str, str], Contact] = {}
        self.deliveries: list[Delivery] = []
        self._payment_outcomes: dict[str, str] = {}  # phone -> check code
        self._transfer_outcomes: dict[str, tuple[str, str]] = {}  # phone -> (status, comment)
        self._tokens: dict[str, float] = {}  # transfer token -> expiry
        self._faults: list[Fault] = []
        self._held_back: list[tuple[str, str, dict[str, str], dict[str, str]]] = []
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self.base_url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def checkout_base_url(self) -> str:
        """Stands for https://api-checkout.cinetpay.com."""
        return self.base_url

    @property
    def transfer_base_url(self) -> str:
        """Stands for https://client.cinetpay.com."""
        return self.base_url

    def __enter__(self) -> CinetPayFake:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # What tests steer: the customer's side of a payment.

    def payment_url(self, transaction_id: str) -> str:
        return f"{self.base_url}/payment/{self.payments[transaction_id].token}"

    def pay(
        self,
        transaction_id: str,
        method: str = "OM",
        *,
        phone: str | None = None,
        prefix: str | None = None,
    ) -> Payment:
        """The customer pays with `method` (OM, MOMO, FLOOZ, WAVECI, OMSN, VISAM, …): ACCEPTED."""
        with self._lock:
            payment = self._open(transaction_id)
            if method in CARD_CODES and not payment.card_option:
                raise ValueError(f"payment {transaction_id} offers no card option")
            self._identify(payment, method, phone, prefix)
            payment.status, payment.code = "ACCEPTED", "00"
            payment.operator_id = self._operator_id()
            payment.payment_date = time.time()
            payment.touched = True
        self._notify_payment(payment)
        return payment

    def refuse(
        self,
        transaction_id: str,
        code: str = "600",
        *,
        method: str = "OM",
        phone: str | None = None,
        prefix: str | None = None,
    ) -> Payment:
        """The payment fails: 600 PAYMENT_FAILED, 602 INSUFFICIENT_BALANCE, 604, 606…"""
        if code not in REFUSED_CODES:
            raise ValueError(f"{code} is not a refusal code")
        with self._lock:
            payment = self._open(transaction_id)
            self._identify(payment, method, phone, prefix)
            payment.status, payment.code, payment.touched = "REFUSED", code, True
        self._notify_payment(payment)
        return payment

    def cancel(self, transaction_id: str) -> Payment:
        """The customer gives up (« Annuler »): 627 TRANSACTION_CANCEL, REFUSED."""
        with self._lock:
            payment = self._open(transaction_id)
            payment.status, payment.code, payment.touched = "REFUSED", "627", True
        self._notify_payment(payment)
        return payment

    def await_customer(
        self,
        transaction_id: str,
        method: str = "OM",
        *,
        code: str = "662",
        phone: str | None = None,
        prefix: str | None = None,
    ) -> Payment:
        """The customer chose a push operator and has not confirmed yet: WAITING_FOR_CUSTOMER
        (notified only when `notify_waiting`); decide later with pay/refuse/cancel."""
        if code not in WAITING_CODES:
            raise ValueError(f"{code} is not a waiting code")
        with self._lock:
            payment = self._open(transaction_id)
            self._identify(payment, method, phone, prefix)
            payment.status, payment.code, payment.touched = "WAITING_FOR_CUSTOMER", code, True
        if self.notify_waiting:
            self._notify_payment(payment)
        return payment

    def payment_outcome_for(self, phone: str, code: str) -> None:
        """The hosted page's « Payer » with this number ends in `code` (00, 600, 602, 662…)."""
        self._payment_outcomes[_digits(phone)] = code

    # What tests steer: transfers.

    def outcome_for(self, phone: str, treatment_status: str, comment: str = "") -> None:
        """Transfers to this number end VAL or REJ, or stay NEW/REC/NOS until settle_transfer."""
        if treatment_status not in TREATMENT_STATUSES:
            raise ValueError(treatment_status)
        self._transfer_outcomes[_digits(phone)] = (treatment_status, comment)

    def settle_transfer(
        self, client_transaction_id: str, treatment_status: str = "VAL", comment: str = ""
    ) -> Transfer:
        if treatment_status not in TREATMENT_STATUSES:
            raise ValueError(treatment_status)
        with self._lock:
            transfer = self.transfers[client_transaction_id]
            if transfer.treatment_status in FINAL_TREATMENT:
                return transfer
            self._move(transfer, treatment_status, comment)
        if treatment_status in FINAL_TREATMENT:
            self._notify_transfer(transfer)
        return transfer

    def fault(self, kind: str, *, times: int = 1, path: str | None = None) -> None:
        with self._lock:
            self._faults.append(Fault(kind, times, path))

    # Notifications anyone can send.

    def notification_fields(self, payment: Payment) -> dict[str, str]:
        with self._lock:
            return {
                "cpm_site_id": self.site_id,
                "cpm_trans_id": payment.transaction_id,
                "cpm_trans_date": _stamp(payment.created_at),
                "cpm_amount": self._amount_text(payment.amount),
                "cpm_currency": payment.currency,
                "signature": payment.signature,
                "payment_method": payment.payment_method,
                "cel_phone_num": payment.phone_number,
                "cpm_phone_prefixe": payment.phone_prefix,
                "cpm_language": payment.lang,
                "cpm_version": "V4",
                "cpm_payment_config": "SINGLE",
                "cpm_page_action": "PAYMENT",
                "cpm_custom": payment.metadata or "",
                "cpm_designation": payment.description,
                "cpm_error_message": CHECKOUT_MESSAGES[payment.code],
            }

    def transfer_fields(self, transfer: Transfer) -> dict[str, str]:
        with self._lock:
            shown = self.view_transfer(transfer)
        return {name: "" if shown[name] is None else str(shown[name]) for name in shown}

    def send_forged_notification(
        self,
        url: str,
        fields: Mapping[str, Any],
        *,
        secret: str | None = None,
        signed: bool = True,
    ) -> int:
        """What someone else can POST to a notify_url: the form `fields`, with an `x-token`
        computed with `secret` (by default a key that is not the account's), or none at all
        (`signed=False`). Returns the receiver's HTTP status."""
        data = {k: "" if v is None else str(v) for k, v in fields.items()}
        headers: dict[str, str] = {}
        if signed:
            headers["x-token"] = x_token(data, secret or secrets.token_hex(32))
        return httpx.post(url, data=data, headers=headers, timeout=CALLBACK_TIMEOUT).status_code

    # Inspection.

    def posts(self, kind: str) -> list[Received]:
        """Every request of that kind received (payment, check, login, contact, transfer,
        transfer_check, balance, page, page_pay, page_cancel, page_refuse), accepted or not."""
        with self._lock:
            return [r for r in self.requests if r.action == kind]

    def view_check(self, payment: Payment) -> Answer:
        with self._lock:
            paid = payment.payment_date
            available = datetime.fromtimestamp(payment.created_at) + timedelta(days=2)
            body = {
                "code": payment.code,
                "message": CHECKOUT_MESSAGES[payment.code],
                "data": {
                    "amount": self._amount_text(payment.amount),
                    "currency": payment.currency,
                    "status": payment.status,
                    "payment_method": payment.payment_method,
                    "description": payment.description,
                    "metadata": payment.metadata,
                    "operator_id": payment.operator_id,
                    "payment_date": _stamp(paid) if paid is not None else "",
                    "fund_availability_date": available.strftime("%Y-%m-%d 00:00:00"),
                },
                "api_response_id": self._response_id(),
            }
            return 200, body

    def view_transfer(self, transfer: Transfer) -> dict[str, Any]:
        with self._lock:
            validated = transfer.validated_at
            return {
                "transaction_id": transfer.transaction_id,
                "client_transaction_id": transfer.client_transaction_id,
                "lot": transfer.lot,
                "amount": transfer.amount,
                "receiver": transfer.phone,
                "sending_status": transfer.sending_status,
                "comment": transfer.comment,
                "treatment_status": transfer.treatment_status,
                "operator_transaction_id": transfer.operator_transaction_id,
                "validated_at": _stamp(validated) if validated is not None else None,
            }

    def balance(self) -> dict[str, int | float]:
        with self._lock:
            return {
                "amount": self._number(self.available + self.in_using),
                "inUsing": self._number(self.in_using),
                "available": self._number(self.available),
            }

    # State changes.

    def _open(self, transaction_id: str) -> Payment:
        payment = self.payments[transaction_id]
        if payment.final:
            raise ValueError(f"payment {transaction_id} is already {payment.status}")
        return payment

    def _identify(
        self, payment: Payment, method: str, phone: str | None, prefix: str | None
    ) -> None:
        payment.payment_method = method
        if method in CARD_CODES:
            payment.phone_number = payment.phone_prefix = ""
            return
        number = _digits(phone) or _digits(payment.body.get("customer_phone_number"))
        calling = _digits(prefix) or CALLING_CODES.get(payment.currency, "")
        if number.startswith(calling) and len(number) > 10:
            number = number[len(calling) :]
        payment.phone_number, payment.phone_prefix = number or "0700000000", calling

    def _operator_id(self) -> str:
        stamp = datetime.now().strftime("%y%m%d.%H%M")
        return f"MP{stamp}.{self._token(6, string.ascii_uppercase + string.digits)}"

    def _move(self, transfer: Transfer, status: str, comment: str) -> None:
        previous = transfer.treatment_status
        transfer.treatment_status = status
        transfer.comment = comment or transfer.comment
        if status in FINAL_TREATMENT and previous not in FINAL_TREATMENT:
            amount = Decimal(transfer.amount)
            self.in_using -= amount
            transfer.sending_status = "CONFIRM"
            if status == "VAL":
                transfer.operator_transaction_id = self._operator_id()
                transfer.validated_at = time.time()
            else:
                self.available += amount

    def _token(self, length: int, alphabet: str = string.ascii_lowercase + string.digits) -> str:
        return "".join(secrets.choice(alphabet) for _ in range(length))

    def _response_id(self) -> str:
        return f"{time.time():.4f}"

    @staticmethod
    def _number(value: Decimal) -> int | float:
        return int(value) if value == value.to_integral_value() else float(value)

    @staticmethod
    def _amount_text(value: Decimal) -> str:
        return str(int(value)) if value == value.to_integral_value() else str(value)

    # Notifications.

    def _notify_payment(self, payment: Payment) -> None:
        fields = self.notification_fields(payment)
        headers = {"x-token": x_token(fields, self.secret_key)}
        with self._lock:
            payment.notifications_sent += 1
        self._dispatch("payment", payment.notify_url, fields, headers)

    def _notify_transfer(self, transfer: Transfer) -> None:
        fields = self.transfer_fields(transfer)
        with self._lock:
            transfer.notifications_sent += 1
        self._dispatch("transfer", transfer.notify_url, fields, {})

    def _dispatch(
        self, kind: str, url: str, fields: dict[str, str], headers: dict[str, str]
    ) -> None:
        """One notification, per `notify_mode`, off the caller's thread."""
        mode = self.notify_mode
        if mode == "drop":
            return
        item = (kind, url, fields, headers)
        if mode == "reorder":
            with self._lock:
                if not self._held_back:
                    self._held_back.append(item)
                    return
                batch = [item, *self._held_back]
                self._held_back = []
        else:
            batch = [item] * (2 if mode == "duplicate" else 1)
        delay = self.notify_delay if mode == "delay" else 0.0
        threading.Timer(delay, self._deliver, args=(batch,)).start()

    def _deliver(self, batch: list[tuple[str, str, dict[str, str], dict[str, str]]]) -> None:
        for kind, url, fields, headers in batch:
            if self.ping_notify_url:
                self._record(Delivery("ping", url, {}, {}, self._send("GET", url)))
            status = self._send("POST", url, fields, headers)
            self._record(Delivery(kind, url, fields, headers, status))

    def _send(
        self,
        method: str,
        url: str,
        fields: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> int | None:
        with contextlib.suppress(httpx.HTTPError):
            return httpx.request(
                method, url, data=fields, headers=headers, timeout=CALLBACK_TIMEOUT
            ).status_code
        return None

    def _record(self, delivery: Delivery) -> None:
        with self._lock:
            self.deliveries.append(delivery)

    def _take_fault(self, path: str) -> str | None:
        with self._lock:
            for fault in self._faults:
                if fault.times > 0 and (fault.path is None or fault.path in path):
                    fault.times -= 1
                    return fault.kind
        return None

    # The Checkout API.

    def _refusal(self, code: str, description: str) -> Answer:
        return self.refusal_status, {
            "code": code,
            "message": CHECKOUT_MESSAGES[code],
            "description": description,
            "api_response_id": self._response_id(),
        }

    def _credentials(self, body: dict[str, Any]) -> Answer | None:
        if not body.get("apikey"):
            return self._refusal("608", "apikey is required")
        if not hmac.compare_digest(str(body["apikey"]), self.apikey):
            return self._refusal("609", "Apikey not found")
        if body.get("site_id") in (None, ""):
            return self._refusal("608", "site_id is required")
        if str(body["site_id"]) != self.site_id:
            return self._refusal("613", "The site_id is not valid")
        return None

    def _amount(self, value: Any, currency: str) -> Decimal | Answer:
        if isinstance(value, bool):
            return self._refusal("611", "amount must be a number")
        try:
            amount = Decimal(str(value))
        except InvalidOperation:
            return self._refusal("611", "amount must be a number")
        if not amount.is_finite() or amount <= 0:
            return self._refusal("611", "amount must be a positive number")
        if currency != "USD":
            if amount != amount.to_integral_value():
                return self._refusal("611", "amount must be an integer")
            if int(amount) % 5 != 0:
                return self._refusal("628", "amount must be a multiple of 5")
        elif amount != amount.quantize(Decimal("0.01")):
            return self._refusal("628", "amount has at most two decimals")
        minimum = MINIMUM_AMOUNTS.get(currency)
        if minimum is not None and amount < minimum:
            return self._refusal("641", f"The minimum amount is {minimum} {currency}")
        return amount

    def _initialise(self, body: Any) -> Answer:
        if not isinstance(body, dict):
            return self._refusal("608", "The request must be a JSON object")
        refused = self._credentials(body)
        if refused is not None:
            return refused
        for name in ("transaction_id", "amount", "currency", "description"):
            if body.get(name) in (None, ""):
                return self._refusal("608", f"{name} is required")
        for name in ("notify_url", "return_url"):
            value = str(body.get(name) or "")
            if not value.startswith(("http://", "https://")):
                return self._refusal("608", f"{name} is required and must be a valid URL")
        currency = str(body["currency"])
        if currency not in CURRENCIES:
            return self._refusal("612", f"The currency must be one of {', '.join(CURRENCIES)}")
        amount = self._amount(body["amount"], currency)
        if not isinstance(amount, Decimal):
            return amount
        channels = str(body.get("channels") or "ALL")
        if channels not in CHANNELS:
            return self._refusal("608", f"channels must be one of {', '.join(CHANNELS)}")
        lang = str(body.get("lang") or "fr")
        if lang not in LANGUAGES:
            return self._refusal("615", "lang must be fr or en")
        if body.get("lock_phone_number") and not body.get("customer_phone_number"):
            return self._refusal("608", "lock_phone_number needs customer_phone_number")
        if channels == "CREDIT_CARD":
            for name in CARD_FIELDS:
                if not body.get(name):
                    return self._refusal("608", f"{name} is required for CREDIT_CARD")
        card_given = any(body.get(name) for name in CARD_FIELDS if name != "customer_phone_number")
        if card_given and not (body.get("customer_address") and body.get("customer_city")):
            return self._refusal(
                "624", "Card parameters are supplied without customer_address and customer_city"
            )
        transaction_id = str(body["transaction_id"])
        if transaction_id in self.payments:
            return self._refusal("624", "This transaction_id has already been used")
        metadata = body.get("metadata")
        payment = Payment(
            transaction_id=transaction_id,
            token=secrets.token_hex(40),
            body=dict(body),
            amount=amount,
            currency=currency,
            description=str(body["description"]),
            notify_url=str(body["notify_url"]),
            return_url=str(body["return_url"]),
            channels=channels,
            lang=lang,
            metadata=None if metadata is None else str(metadata),
            created_at=time.time(),
            signature=secrets.token_hex(32),
        )
        self.payments[transaction_id] = payment
        return 200, {
            "code": "201",
            "message": "CREATED",
            "description": "Transaction created with success",
            "data": {
                "payment_token": payment.token,
                "payment_url": f"{self.base_url}/payment/{payment.token}",
            },
            "api_response_id": self._response_id(),
        }

    def _check(self, body: Any) -> Answer:
        if not isinstance(body, dict):
            return self._refusal("608", "The request must be a JSON object")
        refused = self._credentials(body)
        if refused is not None:
            return refused
        transaction_id, token = body.get("transaction_id"), body.get("token")
        if not transaction_id and not token:
            return self._refusal("608", "transaction_id or token is required")
        if transaction_id:
            payment = self.payments.get(str(transaction_id))
        else:
            payment = next((p for p in self.payments.values() if p.token == token), None)
        if payment is None:
            return self._refusal("624", "Transaction not found")
        return self.view_check(payment)

    # The Transfer API.

    def _transfer_error(self, code: int, status: int | None = None) -> Answer:
        message, description = TRANSFER_MESSAGES[code]
        body = {"code": str(code), "message": message, "description": description, "data": []}
        return (status or self.refusal_status), body

    def _ok(self, data: Any) -> Answer:
        return 200, {"code": 0, "message": "OPERATION_SUCCES", "data": data}

    def _login(self, form: dict[str, str]) -> Answer:
        apikey, password = form.get("apikey", ""), form.get("password", "")
        if not (
            hmac.compare_digest(apikey, self.apikey)
            and hmac.compare_digest(password, self.transfer_password)
        ):
            return self._transfer_error(701)
        token = secrets.token_urlsafe(48)
        self._tokens[token] = time.time() + self.token_ttl
        return self._ok({"token": token})

    def _token_refusal(self, query: dict[str, str]) -> Answer | None:
        expiry = self._tokens.get(query.get("token", ""))
        if expiry is None:
            return self._transfer_error(706)
        if expiry < time.time():
            return self._transfer_error(705)
        return None

    @staticmethod
    def _items(form: dict[str, str]) -> list[dict[str, Any]] | int:
        raw = form.get("data")
        if raw is None:
            return 704
        try:
            items = json.loads(raw)
        except ValueError:
            return 718
        if isinstance(items, dict):
            items = [items]
        if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
            return 704
        return items

    def _add_contacts(self, form: dict[str, str]) -> Answer:
        items = self._items(form)
        if isinstance(items, int):
            return self._transfer_error(items)
        shown = []
        for item in items:
            prefix, phone = _digits(item.get("prefix")), _digits(item.get("phone"))
            if not _PREFIX.match(prefix) or not _PHONE.match(phone):
                return self._transfer_error(802)
            for name in ("name", "surname", "email"):
                if not item.get(name):
                    return self._transfer_error(704)
        for item in items:
            prefix, phone = _digits(item.get("prefix")), _digits(item.get("phone"))
            lot = self._token(22, string.digits)
            if (prefix, phone) in self.contacts:
                code, status = 726, "ERROR_PHONE_ALREADY_MY_CONTACT"
            else:
                code, status = 0, "success"
                self.contacts[(prefix, phone)] = Contact(
                    prefix, phone, str(item["name"]), str(item["surname"]), str(item["email"]), lot
                )
            shown.append(
                {
                    "prefix": prefix,
                    "phone": phone,
                    "name": item["name"],
                    "surname": item["surname"],
                    "email": item["email"],
                    "code": code,
                    "status": status,
                    "lot": lot,
                }
            )
        return self._ok([shown])

    def _send_money(self, form: dict[str, str]) -> tuple[Answer, list[Transfer]]:
        items = self._items(form)
        if isinstance(items, int):
            return self._transfer_error(items), []
        seen: set[str] = set()
        total = Decimal(0)
        for item in items:
            prefix, phone = _digits(item.get("prefix")), _digits(item.get("phone"))
            reference = str(item.get("client_transaction_id") or "")
            if not reference:
                return self._transfer_error(704), []
            if reference in self.transfers or reference in seen:
                return self._transfer_error(805), []
            seen.add(reference)
            if not _PREFIX.match(prefix) or not _PHONE.match(phone):
                return self._transfer_error(802), []
            if (prefix, phone) not in self.contacts:
                return self._transfer_error(724), []
            notify = str(item.get("notify_url") or "")
            if not notify.startswith(("http://", "https://")):
                return self._transfer_error(725), []
            amount = item.get("amount")
            try:
                value = Decimal(str(amount))
            except InvalidOperation:
                return self._transfer_error(801), []
            if (
                isinstance(amount, bool)
                or not value.is_finite()
                or value != value.to_integral_value()
                or int(value) % 5 != 0
            ):
                return self._transfer_error(801), []
            if value < self.transfer_min_amount:
                return self._transfer_error(719), []
            if value > self.transfer_max_amount:
                return self._transfer_error(720), []
            total += value
        if total > self.available:
            return self._transfer_error(602), []
        created: list[Transfer] = []
        for item in items:
            amount = int(Decimal(str(item["amount"])))
            transfer = Transfer(
                transaction_id=self._token(20, string.ascii_uppercase + string.digits),
                client_transaction_id=str(item["client_transaction_id"]),
                lot=self._token(22, string.digits),
                prefix=_digits(item["prefix"]),
                phone=_digits(item["phone"]),
                amount=amount,
                notify_url=str(item["notify_url"]),
                payment_method=item.get("payment_method"),
                created_at=time.time(),
            )
            self.available -= amount
            self.in_using += amount
            self.transfers[transfer.client_transaction_id] = transfer
            created.append(transfer)
        shown = [
            {
                "prefix": t.prefix,
                "phone": t.phone,
                "amount": t.amount,
                "client_transaction_id": t.client_transaction_id,
                "notify_url": t.notify_url,
                "code": 0,
                "status": "success",
                "treatment_status": t.treatment_status,
                "transaction_id": t.transaction_id,
                "lot": t.lot,
            }
            for t in created
        ]
        return self._ok([shown]), created

    def _after_send(self, created: list[Transfer]) -> None:
        """CinetPay processes a transfer once it has answered: its outcome, then notified."""
        if self.hold:
            return
        finished: list[Transfer] = []
        with self._lock:
            for transfer in created:
                status, comment = self._transfer_outcomes.get(transfer.phone, ("VAL", ""))
                if status != "NEW":
                    self._move(transfer, status, comment)
                if status in FINAL_TREATMENT:
                    finished.append(transfer)
        for transfer in finished:
            self._notify_transfer(transfer)

    def _transfer_check(self, query: dict[str, str]) -> Answer:
        reference, ident = query.get("client_transaction_id"), query.get("transaction_id")
        if not reference and not ident:
            return self._transfer_error(704)
        if reference:
            transfer = self.transfers.get(reference)
        else:
            transfer = next((t for t in self.transfers.values() if t.transaction_id == ident), None)
        if transfer is None:
            return self._transfer_error(723)
        return self._ok([self.view_transfer(transfer)])

    # The hosted page.

    @staticmethod
    def _methods(payment: Payment) -> list[str]:
        """The `payment_method` codes the page offers, per `channels` and currency."""
        methods: list[str] = []
        if payment.channels in ("ALL", "MOBILE_MONEY"):
            methods += MOBILE_METHODS.get(payment.currency, DEFAULT_MOBILE)
        if payment.card_option:
            methods += CARD_METHODS.get(payment.currency, ("VISAM",))
        return methods

    def _page(self, payment: Payment, notice: str = "") -> str:
        if payment.final or payment.touched:
            return self._result_page(payment)
        methods = self._methods(payment)
        options = "".join(
            f'<option value="{html.escape(m)}">{html.escape(m)}</option>' for m in methods
        )
        body = payment.body
        locked = bool(body.get("lock_phone_number"))
        number = _digits(body.get("customer_phone_number"))
        calling = CALLING_CODES.get(payment.currency, "")
        if number.startswith(calling) and len(number) > 10:
            number = number[len(calling) :]
        token = html.escape(payment.token)
        readonly = " readonly" if locked else ""
        amount = f"{self._amount_text(payment.amount)} {payment.currency}"
        return _html(
            "Guichet CinetPay",
            f"""<h1>Paiement CinetPay</h1>
<p id="description">{html.escape(payment.description)}</p>
<p>Montant : <strong id="amount">{html.escape(amount)}</strong></p>
<p id="transaction_id">{html.escape(payment.transaction_id)}</p>
{f'<p id="notice" role="alert">{html.escape(notice)}</p>' if notice else ""}
<form id="pay-form" method="post" action="/payment/{token}/pay">
  <label for="payment_method">Moyen de paiement</label>
  <select id="payment_method" name="payment_method">{options}</select>
  <label for="phone_prefix">Indicatif</label>
  <input id="phone_prefix" name="phone_prefix" value="{calling}"{readonly}>
  <label for="phone_number">Numéro</label>
  <input id="phone_number" name="phone_number" value="{number}"{readonly}>
  <button id="pay" type="submit">Payer</button>
</form>
<form id="cancel-form" method="post" action="/payment/{token}/cancel">
  <button id="cancel" type="submit">Annuler</button>
</form>
<form id="refuse-form" method="post" action="/payment/{token}/refuse">
  <button id="refuse" type="submit">Simuler un échec</button>
</form>""",
        )

    def _result_page(self, payment: Payment) -> str:
        outcome = {
            "ACCEPTED": "Paiement effectué avec succès",
            "REFUSED": "Votre paiement a échoué",
            "WAITING_FOR_CUSTOMER": "Confirmez le paiement sur votre téléphone",
        }[payment.status]
        params = {"transaction_id": payment.transaction_id, "token": payment.token}
        if self.return_method == "GET":
            split = urlsplit(payment.return_url)
            query = f"{split.query}&{urlencode(params)}" if split.query else urlencode(params)
            target = html.escape(urlunsplit(split._replace(query=query)))
            back = f'<a id="return" href="{target}">Retour au site marchand</a>'
            script = f'<script>window.location.href = "{target}";</script>'
        else:
            hidden = "".join(
                f'<input type="hidden" name="{k}" value="{html.escape(v)}">'
                for k, v in params.items()
            )
            back = (
                f'<form id="return-form" method="post" action="{html.escape(payment.return_url)}">'
                f'{hidden}<button id="return" type="submit">Retour au site marchand</button></form>'
            )
            script = '<script>document.getElementById("return-form").submit();</script>'
        auto = script if self.auto_return else ""
        return _html(
            "Guichet CinetPay",
            f"""<h1 id="outcome">{outcome}</h1>
<p id="status">{payment.status}</p>
<p id="code">{payment.code} {CHECKOUT_MESSAGES[payment.code]}</p>
{back}
{auto}""",
        )

    def _page_action(self, action: str, token: str, form: dict[str, str]) -> tuple[int, str]:
        with self._lock:
            payment = next((p for p in self.payments.values() if p.token == token), None)
            if payment is None:
                return 404, _html("Guichet CinetPay", "<h1>Lien de paiement invalide</h1>")
            if payment.final or payment.touched:
                return 200, self._result_page(payment)
        if action == "page_cancel":
            self.cancel(payment.transaction_id)
        elif action == "page_refuse":
            self.refuse(payment.transaction_id)
        else:
            method = form.get("payment_method") or "OM"
            phone, prefix = form.get("phone_number"), form.get("phone_prefix")
            if method not in self._methods(payment):
                return 200, self._page(payment, f"Moyen de paiement indisponible : {method}")
            if method not in CARD_CODES and not _PHONE.match(_digits(phone)):
                return 200, self._page(payment, "Numéro de téléphone invalide")
            code = self._payment_outcomes.get(_digits(phone), "00")
            if code == "00":
                self.pay(payment.transaction_id, method, phone=phone, prefix=prefix)
            elif code in WAITING_CODES:
                self.await_customer(
                    payment.transaction_id, method, code=code, phone=phone, prefix=prefix
                )
            elif code == "627":
                self.cancel(payment.transaction_id)
            else:
                self.refuse(payment.transaction_id, code, method=method, phone=phone, prefix=prefix)
        return 200, self._result_page(payment)

    # HTTP.

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def _write(self, status: int, data: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _json(self, status: int, body: dict[str, Any]) -> None:
                self._write(status, json.dumps(body).encode(), "application/json")

            def _html(self, status: int, page: str) -> None:
                self._write(status, page.encode(), "text/html; charset=utf-8")

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

            def _route(self, path: str) -> tuple[str | None, str | None, bool]:
                known = False
                for method, pattern, action in _ROUTES:
                    match = pattern.match(path)
                    if match is None:
                        continue
                    if method != self.command:
                        known = True
                        continue
                    return action, (match.group(1) if match.groups() else None), True
                return None, None, known

            def _parse(self, raw: bytes, headers: dict[str, str]) -> tuple[Any, dict[str, str]]:
                """The body as JSON (or text), and as a form."""
                text = raw.decode("utf-8", "replace")
                form = {k: v[0] for k, v in parse_qs(text, keep_blank_values=True).items()}
                if "json" in headers.get("content-type", "") or text.lstrip().startswith("{"):
                    try:
                        return json.loads(text), form
                    except ValueError:
                        return text, form
                return (form if form else (text or None)), form

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                split = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(split.query).items()}
                body, form = self._parse(raw, headers)
                action, ident, known = self._route(split.path)
                with fake._lock:
                    fake.requests.append(
                        Received(self.command, self.path, headers, body, raw, time.time(), action)
                    )
                if action is None:
                    if known and split.path.startswith("/v1/"):
                        self._json(*fake._transfer_error(708))
                    else:
                        self._json(404, {"code": "404", "message": "NOT_FOUND"})
                    return
                if action.startswith("page"):
                    self._serve_page(action, ident or "", form)
                    return
                fault = fake._take_fault(split.path)
                if fault == "hang":
                    self._hang()
                    return
                if fault == "error_500":
                    self._json(500, {"code": "500", "message": "INTERNAL_SERVER_ERROR"})
                    return
                if fault == "rate_limit":
                    self._json(429, {"code": "429", "message": "TOO_MANY_REQUESTS"})
                    return
                created: list[Transfer] = []
                with fake._lock:
                    status, answer = self._answer(action, body, form, query, created)
                fake._after_send(created)  # accepted: CinetPay goes on, whatever the client sees
                if fault == "error_500_after_accept":
                    self._json(500, {"code": "500", "message": "INTERNAL_SERVER_ERROR"})
                elif fault == "reset_after_accept":
                    self._reset()
                elif fault == "hang_after_accept":
                    self._hang()
                else:
                    self._json(status, answer)

            def _answer(
                self,
                action: str,
                body: Any,
                form: dict[str, str],
                query: dict[str, str],
                created: list[Transfer],
            ) -> Answer:
                if action == "payment":
                    return fake._initialise(body)
                if action == "check":
                    return fake._check(body)
                if action == "login":
                    credentials = body if isinstance(body, dict) else form
                    merged = query | {k: str(v) for k, v in credentials.items()}
                    return fake._login(merged)
                refused = fake._token_refusal(query)
                if refused is not None:
                    return refused
                if action == "balance":
                    return fake._ok(fake.balance())
                if action == "transfer_check":
                    return fake._transfer_check(query)
                if action == "contact":
                    return fake._add_contacts(form)
                answer, made = fake._send_money(form)
                created.extend(made)
                return answer

            def _serve_page(self, action: str, token: str, form: dict[str, str]) -> None:
                if action == "page":
                    with fake._lock:
                        payment = next(
                            (p for p in fake.payments.values() if p.token == token), None
                        )
                        if payment is not None:
                            page = fake._page(payment)
                    if payment is None:
                        self._html(404, _html("Guichet CinetPay", "<h1>Lien invalide</h1>"))
                    else:
                        self._html(200, page)
                    return
                self._html(*fake._page_action(action, token, form))

        return Handler


def _html(title: str, content: str) -> str:
    return (
        '<!doctype html><html lang="fr"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head><body>{content}</body></html>"
    )


# Run on its own (`python -m tests.fakes.cinetpay`): a rehearsal of a connector's set-up.


def rehearsal(options: runner.Options) -> runner.Rehearsal:
    fake = CinetPayFake(
        apikey="fake-cinetpay-apikey",
        site_id="445160",
        secret_key="fake-cinetpay-secret-key",
        transfer_password="fake-cinetpay-transfer-password",
        host=options.host,
        port=options.port,
    )

    def waiting() -> list[str]:
        with fake._lock:
            return [t for t, p in fake.payments.items() if not p.final and not p.touched]

    def act(transaction_id: str, pays: bool) -> object:
        if pays:
            return fake.pay(transaction_id, method="FLOOZTG")
        return fake.refuse(transaction_id, method="FLOOZTG")

    return runner.Rehearsal(
        fake=fake,
        kind="cinetpay",
        environment="production",
        base_url=fake.checkout_base_url,
        settings={
            "site_id": "445160",
            "return_url": "https://shop.example/merci",
            "transfer_base_url": fake.transfer_base_url,
        },
        secrets={
            "apikey": "fake-cinetpay-apikey",
            "secret_key": "fake-cinetpay-secret-key",
            "transfer_password": "fake-cinetpay-transfer-password",
        },
        routes={"moov_tg": ("collect", "disburse")},
        payment={"amount": 5000, "operator": "moov_tg", "phone_number": "22899123456"},
        callbacks="a form POST (x-token signed) to each payment's notify_url, which Cauri "
        "names from CAURI_PUBLIC_URL (`cauri serve` on loopback sets it to its own address)",
        customer=runner.Customer(waiting, act),
        notes=(
            "the customer is scripted (--customer): each payment is paid with Flooz Togo (or "
            "refused) within a second; with --customer waits, open the payment's payment_url",
        ),
    )


if __name__ == "__main__":
    raise SystemExit(
        runner.main(
            rehearsal,
            description="CinetPay's Checkout and Transfer APIs' contract fake, on its own.",
            name="cinetpay-fake",
            customer=True,
        )
    )
