"""A contract fake of pawaPay's Merchant API v2 (deposits, payouts, refunds, toolkit), over
real HTTP on loopback, for the connector's end-to-end tests. It reproduces what pawaPay
documents (sources in docs/research/pawapay.md), faults included; it is not shaped to Cauri.

Reproduced:
- `Authorization: Bearer <token>` on every call: none is 401 NO_AUTHENTICATION, a wrong one
  403 AUTHENTICATION_ERROR (`{"status": "REJECTED", "failureReason": {failureCode,
  failureMessage}}`);
- `POST /v2/deposits`, `/v2/payouts`, `/v2/refunds`: the id a UUID v4, amounts as strings with
  no leading zero, `payer`/`recipient` `{type: "MMO", accountDetails: {phoneNumber, provider}}`,
  `clientReferenceId`, `customerMessage` (4 to 22 characters), `metadata` (up to 10 objects);
  answers `{<id>, status: ACCEPTED, created}` (deposits add `nextStep`), `DUPLICATE_IGNORED`
  for an id already accepted, `REJECTED` with `failureReason`: HTTP 400 INVALID_INPUT,
  MISSING_PARAMETER, UNSUPPORTED_PARAMETER, INVALID_PARAMETER, DUPLICATE_METADATA_FIELD; 403
  DEPOSITS_/PAYOUTS_/REFUNDS_NOT_ALLOWED; 200 INVALID_PROVIDER, INVALID_CURRENCY,
  INVALID_AMOUNT (decimals), AMOUNT_OUT_OF_BOUNDS, INVALID_PHONE_NUMBER,
  PROVIDER_TEMPORARILY_UNAVAILABLE (the provider's status CLOSED in the active configuration);
- PREAUTH providers (ORANGE_BFA): `preAuthorisationCode` required (missing: 400
  MISSING_PARAMETER); a wrong one fails the deposit with PAYMENT_NOT_APPROVED (the failure
  pawaPay gives for a missing or wrong code is not documented: this is the fake's choice);
- REDIRECT_AUTH providers (WAVE_SEN, WAVE_CIV): `nextStep: GET_AUTH_URL`, then PROCESSING with
  `nextStep: REDIRECT_TO_AUTH_URL` and an `authorizationUrl`, with a PROCESSING callback;
- payouts and refunds to a provider whose status is DELAYED are ACCEPTED then ENQUEUED;
- refunds of a COMPLETED deposit only (unknown: NOT_FOUND, not completed: INVALID_STATE),
  partial or full (no amount: what is left), AMOUNT_TOO_LARGE, DEPOSIT_ALREADY_REFUNDED,
  REFUND_IN_PROGRESS, to the deposit's payer;
- `GET /v2/{deposits|payouts|refunds}/{id}`: `{status: FOUND, data}` or `{status:
  NOT_FOUND}`; data statuses ACCEPTED, PROCESSING, ENQUEUED, COMPLETED, FAILED,
  IN_RECONCILIATION; `providerTransactionId` once completed, `failureReason` once failed;
- `POST /v2/{kind}/resend-callback/{id}`: ACCEPTED (the callback is sent again), REJECTED
  NOT_FOUND, or INVALID_STATE while not final;
- callbacks: POSTed to the URL configured per operation type (`callback_urls`, as in the
  dashboard), once final (and PROCESSING for redirect authorisation), retried on a non-2xx
  answer or a network error for `callback_retry_for` seconds (15 minutes, as documented);
  modes to drop, delay, duplicate and reorder them; forged ones;
- signed callbacks (`signed_callbacks=True`): RFC 9421 as pawaPay does it: `Content-Digest:
  sha-512=:…:`, `Signature-Date`, `Signature-Input: sig-pp=("@method" "@authority" "@path"
  "signature-date" "content-digest" "content-type");alg="ecdsa-p256-sha256";keyid=…;created=…;
  expires=…`, `Signature: sig-pp=:<DER ECDSA P-256 / SHA-256, base64>:`, `Accept-Signature`,
  `Accept-Digest`; the key's public half at `GET /v2/public-key/http` as `[{id, key(PEM)}]`;
- `GET /v2/active-conf` (`country`, `operationType` filters), `GET /v2/availability`,
  `POST /v2/predict-provider` (sanitises, validates the length, predicts from the prefix);
- the sandbox's test numbers for Benin, Burkina Faso, Côte d'Ivoire, Senegal and Congo
  (TEST_NUMBERS), the "SUBMITTED" ones staying in flight with no callback; any other number
  succeeds;
- faults for the next requests: hang, 500 UNKNOWN_ERROR before or after the request is
  accepted, a connection reset after it is accepted, a hang after it is accepted (hang and
  500 on the wallet balances too, for a fault whose path names them).
- the wallet statement's CSV (`statement_csv`), as the dashboard exports it, with the columns
  pawaPay documents (`Creation Date` in UTC, `MSISDN`, `Transaction ID` = our id, `Amount`,
  `Currency`, `Country`, `MNO`, `Type`): one line per completed deposit, payout and refund;
  the `Type` values (`Deposit`, `Payout`, `Refund`, `Fees`) are the fake's choice, pawaPay's list
  is not in the stored docs; and what a real one may hold that Cauri did not ask (a line
  twice, a line missing, an amount changed, lines of its own);
- `GET /v2/wallet-balances`: one wallet per country of the configuration (`{balances:
  [{country, balance, currency, provider: ""}]}`, the balance a string in major units: an
  opening `wallet_opening` plus each completed deposit, less each completed payout and
  refund; the fake takes no fee);
- statements: `POST /v2/statements` (`wallet {country, currency}`, `startDate`, `endDate`,
  at most 31 days, `compressed`; `{statementId, status: ACCEPTED, created}` or REJECTED with
  `failureReason`), `GET /v2/statements/{statementId}` (`{status: FOUND, data: {…, status
  PROCESSING | COMPLETED | FAILED, fileSize, downloadUrl, downloadUrlExpiresAt,
  completedAt}}`, PROCESSING for `statement_polls` reads first; NOT_FOUND), the file at
  `downloadUrl` (no token: a pre-signed address), the wallet's statement CSV of that period
  with what `statement_wrongs` makes wrong; `statement_failure` fails the next ones;
Not reproduced: signed requests (`signedRequestsOnly`), bulk payouts, cancelling enqueued
payouts, remittances, checkouts, payment page, split payments, gzip statements,
signatures on responses. Mali and Togo: no provider for them is in pawaPay's stored docs;
UNVERIFIED_PROVIDERS holds the codes third parties use, for tests that opt in.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import io
import json
import re
import secrets
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.fakes import CALLBACK_TIMEOUT, runner

KINDS = ("deposit", "payout", "refund")
OPERATION = {"deposit": "DEPOSIT", "payout": "PAYOUT", "refund": "REFUND"}
ID_FIELD = {"deposit": "depositId", "payout": "payoutId", "refund": "refundId"}
PARTY_FIELD = {"deposit": "payer", "payout": "recipient", "refund": "recipient"}
NOT_ALLOWED = {
    "deposit": "DEPOSITS_NOT_ALLOWED",
    "payout": "PAYOUTS_NOT_ALLOWED",
    "refund": "REFUNDS_NOT_ALLOWED",
}
FINAL = ("COMPLETED", "FAILED")
KEY_ID = "HTTP_EC_P256_KEY:1"
COVERED = ("@method", "@authority", "@path", "signature-date", "content-digest", "content-type")
ACCEPT_SIGNATURE = "rsa-pss-sha512,ecdsa-p256-sha256,rsa-v1_5-sha256,ecdsa-p384-sha384"
ACCEPT_DIGEST = "sha-256,sha-512"
CALLBACK_CONTENT_TYPE = "application/json; charset=UTF-8"

# Country: calling code, display names, lengths of the national number.
COUNTRIES: dict[str, tuple[str, dict[str, str], tuple[int, ...]]] = {
    "BEN": ("229", {"en": "Benin", "fr": "Bénin"}, (8, 10)),
    "BFA": ("226", {"en": "Burkina Faso", "fr": "Burkina Faso"}, (8,)),
    "CIV": ("225", {"en": "Côte d'Ivoire", "fr": "Côte d'Ivoire"}, (10,)),
    "COG": ("242", {"en": "Republic of the Congo", "fr": "République du Congo"}, (9,)),
    "MLI": ("223", {"en": "Mali", "fr": "Mali"}, (8,)),
    "SEN": ("221", {"en": "Senegal", "fr": "Sénégal"}, (9,)),
    "TGO": ("228", {"en": "Togo", "fr": "Togo"}, (8,)),
}


@dataclass
class Provider:
    """One provider of the account's active configuration (one currency)."""

    provider: str
    country: str
    currency: str
    display_name: str
    prefixes: tuple[str, ...]  # national-number prefixes predict-provider maps to it
    auth_type: str = "PROVIDER_AUTH"  # PROVIDER_AUTH | PREAUTH | REDIRECT_AUTH
    min_amount: str = "100"
    max_amount: str = "2000000"
    decimals: str = "NONE"  # NONE | TWO_PLACES
    operations: tuple[str, ...] = ("DEPOSIT", "PAYOUT", "REFUND")
    status: dict[str, str] = field(default_factory=dict)  # operation -> OPERATIONAL|DELAYED|CLOSED

    def status_of(self, operation: str) -> str:
        return self.status.get(operation, "OPERATIONAL")


def _providers(*rows: tuple[str, str, str, tuple[str, ...], str]) -> list[Provider]:
    return [
        Provider(code, country, "XAF" if country == "COG" else "XOF", name, prefixes, auth)
        for code, country, name, prefixes, auth in rows
    ]


# The providers pawaPay documents for the countries Cauri serves (v2/docs/providers). The
# prefixes are the fake's own (pawaPay publishes no prefix table); they cover the test numbers.
DOCUMENTED_PROVIDERS = _providers(
    (
        "MTN_MOMO_BEN",
        "BEN",
        "MTN",
        ("51", "52", "53", "54", "61", "62", "66", "67", "69", "90", "91", "96", "97"),
        "PROVIDER_AUTH",
    ),
    (
        "MOOV_BEN",
        "BEN",
        "Moov",
        ("55", "58", "60", "63", "64", "65", "68", "94", "95", "98", "99"),
        "PROVIDER_AUTH",
    ),
    (
        "MOOV_BFA",
        "BFA",
        "Moov",
        ("01", "02", "50", "51", "52", "53", "60", "61", "62", "63", "70", "71", "72", "73"),
        "PROVIDER_AUTH",
    ),
    (
        "ORANGE_BFA",
        "BFA",
        "Orange",
        ("05", "06", "07", "54", "55", "56", "57", "64", "65", "66", "67", "74", "75", "76", "77"),
        "PREAUTH",
    ),
    ("MTN_MOMO_CIV", "CIV", "MTN", ("05",), "PROVIDER_AUTH"),
    ("ORANGE_CIV", "CIV", "Orange", ("07",), "PROVIDER_AUTH"),
    ("WAVE_CIV", "CIV", "Wave", (), "REDIRECT_AUTH"),
    ("FREE_SEN", "SEN", "Free", ("76",), "PROVIDER_AUTH"),
    ("ORANGE_SEN", "SEN", "Orange", ("77", "78"), "PROVIDER_AUTH"),
    ("WAVE_SEN", "SEN", "Wave", (), "REDIRECT_AUTH"),
    ("AIRTEL_COG", "COG", "Airtel", ("04", "05"), "PROVIDER_AUTH"),
    ("MTN_MOMO_COG", "COG", "MTN", ("06",), "PROVIDER_AUTH"),
)
# Not in pawaPay's stored docs: codes third-party integrations use for Mali and Togo.
UNVERIFIED_PROVIDERS = _providers(
    ("ORANGE_MLI", "MLI", "Orange", ("7", "8"), "PROVIDER_AUTH"),
    ("MOOV_MLI", "MLI", "Moov", ("6", "9"), "PROVIDER_AUTH"),
    ("MOOV_TGO", "TGO", "Moov", ("79", "96", "97", "98", "99"), "PROVIDER_AUTH"),
    ("TOGOCOM_TGO", "TGO", "Togocom", ("70", "71", "72", "90", "91", "92", "93"), "PROVIDER_AUTH"),
)

# (operation, MSISDN) -> (status, failureCode). PROCESSING: the docs' "SUBMITTED", no callback.
_STUCK = ("PROCESSING", None)
TEST_NUMBERS: dict[tuple[str, str], tuple[str, str | None]] = {
    # Benin, MTN (v2/docs/test_numbers, read directly).
    ("DEPOSIT", "22951345029"): ("FAILED", "PAYER_NOT_FOUND"),
    ("DEPOSIT", "22951345039"): ("FAILED", "PAYMENT_NOT_APPROVED"),
    ("DEPOSIT", "22951345069"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("DEPOSIT", "22951345129"): _STUCK,
    ("DEPOSIT", "22951345789"): ("COMPLETED", None),
    ("PAYOUT", "22951345089"): ("FAILED", "RECIPIENT_NOT_FOUND"),
    ("PAYOUT", "22951345119"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("PAYOUT", "22951345129"): _STUCK,
    ("PAYOUT", "22951345789"): ("COMPLETED", None),
    # Burkina Faso, Moov (read directly).
    ("DEPOSIT", "22602345048"): ("FAILED", "INSUFFICIENT_BALANCE"),
    ("DEPOSIT", "22602345068"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("DEPOSIT", "22602345138"): _STUCK,
    ("DEPOSIT", "22602345678"): ("COMPLETED", None),
    ("PAYOUT", "22602345118"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("PAYOUT", "22602345138"): _STUCK,
    ("PAYOUT", "22602345678"): ("COMPLETED", None),
    # Côte d'Ivoire, MTN (the same page, through a copy).
    ("DEPOSIT", "2250503456029"): ("FAILED", "PAYER_NOT_FOUND"),
    ("DEPOSIT", "2250503456039"): ("FAILED", "PAYMENT_NOT_APPROVED"),
    ("DEPOSIT", "2250503456069"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("DEPOSIT", "2250503456129"): _STUCK,
    ("DEPOSIT", "2250503456789"): ("COMPLETED", None),
    ("PAYOUT", "2250503456089"): ("FAILED", "RECIPIENT_NOT_FOUND"),
    ("PAYOUT", "2250503456119"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("PAYOUT", "2250503456129"): _STUCK,
    ("PAYOUT", "2250503456789"): ("COMPLETED", None),
    # Senegal, Free (through a copy).
    ("DEPOSIT", "221763456049"): ("FAILED", "INSUFFICIENT_BALANCE"),
    ("DEPOSIT", "221763456069"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("DEPOSIT", "221763456129"): _STUCK,
    ("DEPOSIT", "221763456789"): ("COMPLETED", None),
    ("PAYOUT", "221763456119"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("PAYOUT", "221763456129"): _STUCK,
    ("PAYOUT", "221763456789"): ("COMPLETED", None),
    # Congo, Airtel (through a copy).
    ("DEPOSIT", "242053456039"): ("FAILED", "PAYMENT_NOT_APPROVED"),
    ("DEPOSIT", "242053456049"): ("FAILED", "INSUFFICIENT_BALANCE"),
    ("DEPOSIT", "242053456069"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("DEPOSIT", "242053456129"): _STUCK,
    ("DEPOSIT", "242053456789"): ("COMPLETED", None),
    ("PAYOUT", "242053456089"): ("FAILED", "RECIPIENT_NOT_FOUND"),
    ("PAYOUT", "242053456119"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("PAYOUT", "242053456129"): _STUCK,
    ("PAYOUT", "242053456789"): ("COMPLETED", None),
    # The other providers' tabs, from a third party's sandbox script (success, a failure whose
    # code it does not name, in flight): Moov Benin, Orange Burkina Faso, Orange Côte d'Ivoire,
    # Orange Senegal, MTN Congo. The failure codes here are guesses.
    ("DEPOSIT", "22995345789"): ("COMPLETED", None),
    ("DEPOSIT", "22995345679"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("DEPOSIT", "22995345639"): _STUCK,
    ("DEPOSIT", "22607345678"): ("COMPLETED", None),
    ("DEPOSIT", "22607345148"): ("FAILED", "PAYMENT_NOT_APPROVED"),
    ("DEPOSIT", "22607345128"): _STUCK,
    ("DEPOSIT", "2250734567890"): ("COMPLETED", None),
    ("DEPOSIT", "2250734567030"): ("FAILED", "UNSPECIFIED_FAILURE"),
    ("DEPOSIT", "2250734567130"): _STUCK,
    ("DEPOSIT", "221773456789"): ("COMPLETED", None),
    ("DEPOSIT", "221773456029"): ("FAILED", "PAYER_NOT_FOUND"),
    ("DEPOSIT", "221773456129"): _STUCK,
    ("DEPOSIT", "242063456789"): ("COMPLETED", None),
    ("DEPOSIT", "242063456029"): ("FAILED", "PAYER_NOT_FOUND"),
    ("DEPOSIT", "242063456129"): _STUCK,
}
FAILURE_MESSAGES = {
    "PAYER_NOT_FOUND": "The phone number does not belong to the provider.",
    "RECIPIENT_NOT_FOUND": "The phone number does not belong to the provider.",
    "PAYMENT_NOT_APPROVED": "The customer did not authorize the payment.",
    "INSUFFICIENT_BALANCE": "The customer does not have enough funds.",
    "PAYMENT_IN_PROGRESS": "The customer has an unfinished transaction pending.",
    "WALLET_LIMIT_REACHED": "The customer has reached a limit on their wallet.",
    "PAWAPAY_WALLET_OUT_OF_FUNDS": "Your pawaPay wallet does not have the funds.",
    "MANUALLY_CANCELLED": "The enqueued payment was cancelled.",
    "UNSPECIFIED_FAILURE": "The provider did not give any information about the failure.",
    "UNKNOWN_ERROR": "An unknown error has occurred while processing this payment.",
}
_AMOUNT = re.compile(r"^(0|[1-9][0-9]*)(\.[0-9]+)?$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")
_MESSAGE = re.compile(r"^[A-Za-z0-9 ]{4,22}$")
_KIND_PATH = re.compile(r"^/v2/(deposits|payouts|refunds)$")
_STATUS_PATH = re.compile(r"^/v2/(deposits|payouts|refunds)/([^/]+)$")
_RESEND_PATH = re.compile(r"^/v2/(deposits|payouts|refunds)/resend-callback/([^/]+)$")
_PLURAL = {"deposits": "deposit", "payouts": "payout", "refunds": "refund"}
_ALLOWED_FIELDS = {
    "deposit": {
        "depositId",
        "amount",
        "currency",
        "payer",
        "preAuthorisationCode",
        "clientReferenceId",
        "customerMessage",
        "metadata",
        "successfulUrl",
        "failedUrl",
    },
    "payout": {
        "payoutId",
        "amount",
        "currency",
        "recipient",
        "clientReferenceId",
        "customerMessage",
        "metadata",
    },
    "refund": {"refundId", "depositId", "amount", "currency", "clientReferenceId", "metadata"},
}


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_uuid4(value: object) -> bool:
    if not isinstance(value, str) or len(value) != 36:
        return False
    try:
        return uuid.UUID(value).version == 4
    except ValueError:
        return False


def shown_amount(value: Decimal) -> str:
    return f"{value:.2f}"


def _instant(value: object) -> datetime:
    """pawaPay's statement dates: RFC 3339, its examples without an offset (taken as UTC)."""
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rejected(code: str, message: str) -> dict[str, Any]:
    return {"failureReason": {"failureCode": code, "failureMessage": message}}


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any
    at: float


@dataclass
class Payment:
    id: str
    kind: str  # deposit | payout | refund
    body: dict[str, Any]
    provider: Provider
    phone_number: str
    amount: Decimal
    currency: str
    created: str
    status: str = "ACCEPTED"
    failure_code: str | None = None
    provider_transaction_id: str | None = None
    deposit_id: str | None = None  # a refund's deposit
    callbacks_sent: int = 0
    no_callback: bool = False  # a test number that stays in flight

    @property
    def final(self) -> bool:
        return self.status in FINAL


@dataclass
class Fault:
    kind: str  # hang | error_500 | error_500_after_accept | reset_after_accept | hang_after_accept
    times: int
    path: str | None  # a substring of the path it applies to; None: any initiation


class Rejected(Exception):
    def __init__(self, http: int, code: str, message: str) -> None:
        super().__init__(message)
        self.http, self.code, self.message = http, code, message


class PawapayFake:
    def __init__(
        self,
        *,
        api_token: str,
        callback_urls: dict[str, str] | None = None,
        signed_callbacks: bool = False,
        company_name: str = "Cauri Test",
        providers: list[Provider] | None = None,
        host: str = "127.0.0.1",  # loopback; a port of 0 is a free one
        port: int = 0,
    ) -> None:
        self.api_token = api_token
        self.callback_urls: dict[str, str] = dict(callback_urls or {})
        self.signed_callbacks = signed_callbacks
        self.company_name = company_name
        chosen = providers if providers is not None else DOCUMENTED_PROVIDERS
        self.providers: dict[str, Provider] = {
            p.provider: replace(p, status=dict(p.status)) for p in chosen
        }
        self.requests: list[Received] = []
        self.deposits: dict[str, Payment] = {}
        self.payouts: dict[str, Payment] = {}
        self.refunds: dict[str, Payment] = {}
        self.resend_requests: list[tuple[str, str]] = []  # (kind, id)
        self.callbacks_attempted: list[tuple[str, str, int | None]] = []  # (kind, id, answer)
        self.callback_mode = "send"  # send | drop | delay | duplicate | reorder
        self.callback_delay = 0.5
        self.callback_retry_for = 15 * 60.0  # pawaPay retries callbacks for 15 minutes
        self.callback_retry_first = 0.2  # seconds before the first retry, doubling, at most 10
        self.callback_includes_client_reference = False
        self.hold = False  # payments stay in flight until settle()
        self.public_key_delay = 0.0  # seconds the public keys take to come (a slow pawaPay)
        self.in_flight_status = "PROCESSING"  # or ACCEPTED, IN_RECONCILIATION
        self.preauthorisation_code: str | None = None  # None: any non-empty code is right
        self.wallet_opening = Decimal("1000000")
        self.statement_polls = 1  # reads of a statement that answer PROCESSING first
        self.statement_failure: str | None = None  # a failureCode: the next statements fail
        self.statement_wrongs: dict[str, Any] = {}  # statement_csv's twice, omit, amounts, extra
        self.statements: dict[str, dict[str, Any]] = {}
        self._outcomes: dict[str, tuple[str, str | None]] = {}
        self._faults: list[Fault] = []
        self._held_back: list[tuple[Payment, dict[str, Any]]] = []
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self.base_url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> PawapayFake:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # What tests steer.

    @property
    def public_key_pem(self) -> str:
        return (
            self._key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )

    def outcome_for(self, phone_number: str, status: str, failure_code: str | None = None) -> None:
        """Payments to or from this number end in `status`: COMPLETED, FAILED (with
        `failure_code`, UNSPECIFIED_FAILURE by default) or PROCESSING (no callback, ever)."""
        self._outcomes[phone_number] = (status, failure_code)

    def fault(self, kind: str, *, times: int = 1, path: str | None = None) -> None:
        self._faults.append(Fault(kind, times, path))

    def provider_status(self, provider: str, operation: str, status: str) -> None:
        """The provider's status for an operation: OPERATIONAL, DELAYED or CLOSED."""
        with self._lock:
            self.providers[provider].status[operation] = status

    def settle(
        self, payment_id: str, status: str = "COMPLETED", failure_code: str | None = None
    ) -> None:
        """Decides a payment in flight now (the customer approved, the provider answered)."""
        with self._lock:
            payment = self._find(payment_id)
            if payment is None:
                raise KeyError(payment_id)
            if payment.final:
                return
            self._finish(payment, status, failure_code)
        self._notify(payment)

    def payment(self, payment_id: str) -> Payment | None:
        with self._lock:
            return self._find(payment_id)

    def statement_csv(
        self,
        *,
        twice: Iterable[str] = (),
        omit: Iterable[str] = (),
        amounts: dict[str, str] | None = None,
        currencies: dict[str, str] | None = None,
        extra: Iterable[dict[str, str]] = (),
        country: str | None = None,
        period: tuple[str, str] | None = None,
    ) -> str:
        """The wallet's statement: a line per completed deposit, payout and refund, in the
        order they were made (of one `country`'s wallet, made within `period`, ISO instants
        compared as text, when given); `twice` listed twice, `omit` left out, `amounts` and
        `currencies` changed, then `extra` lines (column name to value)."""
        columns = ("Creation Date", "MSISDN", "Transaction ID", "Amount", "Currency")
        columns += ("Country", "MNO", "Type")
        types = {"deposit": "Deposit", "payout": "Payout", "refund": "Refund"}
        changed, left_out, doubled = amounts or {}, set(omit), set(twice)
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\r\n")
        writer.writeheader()
        with self._lock:
            made = [p for kind in KINDS for p in self._store(kind).values()]
        for payment in sorted(made, key=lambda p: p.created):
            if payment.status != "COMPLETED" or payment.id in left_out:
                continue
            if country is not None and payment.provider.country != country:
                continue
            if period is not None and not period[0] <= payment.created < period[1]:
                continue
            row = {
                "Creation Date": payment.created.replace("T", " ").rstrip("Z"),
                "MSISDN": payment.phone_number,
                "Transaction ID": payment.id,
                "Amount": changed.get(payment.id, shown_amount(payment.amount)),
                "Currency": (currencies or {}).get(payment.id, payment.currency),
                "Country": payment.provider.country,
                "MNO": payment.provider.provider,
                "Type": types[payment.kind],
            }
            writer.writerows([row, row] if payment.id in doubled else [row])
        writer.writerows(extra)
        return out.getvalue()

    def wallets(self) -> list[dict[str, str]]:
        with self._lock:
            countries = {p.country: p.currency for p in self.providers.values()}
            moved = dict.fromkeys(countries, self.wallet_opening)
            for kind, sign in (("deposit", 1), ("payout", -1), ("refund", -1)):
                for payment in self._store(kind).values():
                    if payment.status == "COMPLETED":
                        moved[payment.provider.country] += sign * payment.amount
        return [
            {
                "country": c,
                "balance": shown_amount(moved[c]),
                "currency": countries[c],
                "provider": "",
            }
            for c in sorted(countries)
        ]

    def _new_statement(self, body: Any) -> tuple[int, dict[str, Any]]:
        wallet = body.get("wallet") if isinstance(body, dict) else None
        if not isinstance(wallet, dict) or not wallet.get("country") or not wallet.get("currency"):
            return 400, _rejected("MISSING_PARAMETER", "wallet.country and wallet.currency")
        try:
            start = _instant(body["startDate"])
            end = _instant(body["endDate"])
        except (KeyError, TypeError, ValueError):
            return 400, _rejected("INVALID_PARAMETER", "startDate and endDate")
        if not start < end or (end - start).days > 31:
            return 200, {"status": "REJECTED", **_rejected("INVALID_PARAMETER", "at most 31 days")}
        statement_id = str(uuid.uuid4())
        with self._lock:
            self.statements[statement_id] = {
                "wallet": wallet,
                "period": (_iso(start), _iso(end)),
                "startDate": body["startDate"],
                "endDate": body["endDate"],
                "created": now_iso(),
                "reads": 0,
                "failure": self.statement_failure,
            }
        return 200, {"statementId": statement_id, "status": "ACCEPTED", "created": now_iso()}

    def _statement(self, statement_id: str) -> dict[str, Any]:
        with self._lock:
            found = self.statements.get(statement_id)
            if found is None:
                return {"status": "NOT_FOUND"}
            found["reads"] += 1
            data: dict[str, Any] = {
                "statementId": statement_id,
                "wallet": found["wallet"],
                "created": found["created"],
                "startDate": found["startDate"],
                "endDate": found["endDate"],
            }
            if found["reads"] <= self.statement_polls:
                return {"status": "FOUND", "data": data | {"status": "PROCESSING"}}
            if found["failure"] is not None:
                reason = {"failureCode": found["failure"], "failureMessage": "Statement failed."}
                return {
                    "status": "FOUND",
                    "data": data
                    | {"status": "FAILED", "failedAt": now_iso(), "failureReason": reason},
                }
        content = self._statement_file(statement_id)
        return {
            "status": "FOUND",
            "data": data
            | {
                "status": "COMPLETED",
                "fileSize": len(content.encode()),
                "downloadUrl": f"{self.base_url}/files/statements/{statement_id}.csv",
                "downloadUrlExpiresAt": now_iso(),
                "completedAt": now_iso(),
            },
        }

    def _statement_file(self, statement_id: str) -> str:
        found = self.statements[statement_id]
        return self.statement_csv(
            country=found["wallet"]["country"], period=found["period"], **self.statement_wrongs
        )

    def posts(self, kind: str) -> list[Received]:
        """Every initiation request of that kind received, accepted or not (re-sends too)."""
        path = f"/v2/{kind}s"
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path == path]

    def send_forged_callback(
        self,
        kind: str,
        body: dict[str, Any],
        *,
        signed_with_wrong_key: bool = False,
        unsigned: bool = False,
    ) -> int:
        """A callback pawaPay never sent, to the `kind`'s callback URL: signed with the fake's
        key (a valid signature over a made-up body), with another key, or not at all."""
        url = self.callback_urls[kind]
        raw = json.dumps(body).encode()
        if unsigned:
            headers = {"Content-Type": CALLBACK_CONTENT_TYPE}
        else:
            key = ec.generate_private_key(ec.SECP256R1()) if signed_with_wrong_key else self._key
            headers = self.signature_headers(url, raw, key=key)
        return httpx.post(url, content=raw, headers=headers, timeout=CALLBACK_TIMEOUT).status_code

    # Signatures.

    def signature_headers(
        self, url: str, raw: bytes, *, key: ec.EllipticCurvePrivateKey | None = None
    ) -> dict[str, str]:
        """The headers of a signed callback to `url` with body `raw` (RFC 9421, as pawaPay)."""
        target = httpx.URL(url)
        authority = target.netloc.decode("ascii")
        digest = "sha-512=:" + base64.b64encode(hashlib.sha512(raw).digest()).decode() + ":"
        moment = datetime.now(UTC)
        signature_date = moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        created = int(moment.timestamp())
        params = (
            "(" + " ".join(f'"{c}"' for c in COVERED) + ")"
            f';alg="ecdsa-p256-sha256";keyid="{KEY_ID}";created={created};expires={created + 60}'
        )
        values = {
            "@method": "POST",
            "@authority": authority,
            "@path": target.raw_path.decode("ascii").split("?")[0] or "/",
            "signature-date": signature_date,
            "content-digest": digest,
            "content-type": CALLBACK_CONTENT_TYPE,
        }
        base = "\n".join(f'"{c}": {values[c]}' for c in COVERED)
        base += f'\n"@signature-params": {params}'
        signer = key or self._key
        signature = signer.sign(base.encode(), ec.ECDSA(hashes.SHA256()))  # DER, as pawaPay
        return {
            "Host": authority,
            "Content-Type": CALLBACK_CONTENT_TYPE,
            "Content-Digest": digest,
            "Signature-Date": signature_date,
            "Signature": "sig-pp=:" + base64.b64encode(signature).decode() + ":",
            "Signature-Input": "sig-pp=" + params,
            "Accept-Signature": ACCEPT_SIGNATURE,
            "Accept-Digest": ACCEPT_DIGEST,
        }

    # The payments.

    def _store(self, kind: str) -> dict[str, Payment]:
        return {"deposit": self.deposits, "payout": self.payouts, "refund": self.refunds}[kind]

    def _find(self, payment_id: str) -> Payment | None:
        for kind in KINDS:
            found = self._store(kind).get(payment_id)
            if found is not None:
                return found
        return None

    def _outcome(self, payment: Payment) -> tuple[str, str | None]:
        override = self._outcomes.get(payment.phone_number)
        if override is not None:
            return override
        if payment.kind == "refund":
            return ("COMPLETED", None)
        return TEST_NUMBERS.get(
            (OPERATION[payment.kind], payment.phone_number), ("COMPLETED", None)
        )

    def _finish(self, payment: Payment, status: str, failure_code: str | None) -> None:
        payment.status = status
        if status == "COMPLETED":
            payment.provider_transaction_id = secrets.token_hex(6).upper()
        elif status == "FAILED":
            payment.failure_code = failure_code or "UNSPECIFIED_FAILURE"

    def view(self, payment: Payment, *, callback: bool = False) -> dict[str, Any]:
        body = payment.body
        shown: dict[str, Any] = {
            ID_FIELD[payment.kind]: payment.id,
            "status": payment.status,
            "amount": shown_amount(payment.amount),
            "currency": payment.currency,
            "country": payment.provider.country,
            PARTY_FIELD[payment.kind]: {
                "type": "MMO",
                "accountDetails": {
                    "phoneNumber": payment.phone_number,
                    "provider": payment.provider.provider,
                },
            },
            "customerMessage": body.get("customerMessage") or self.company_name,
            "created": payment.created,
        }
        if payment.kind == "refund":
            shown["depositId"] = payment.deposit_id
        if "clientReferenceId" in body and (
            not callback or self.callback_includes_client_reference
        ):
            shown["clientReferenceId"] = body["clientReferenceId"]
        if payment.provider.auth_type == "REDIRECT_AUTH" and payment.kind == "deposit":
            for name in ("successfulUrl", "failedUrl"):
                if name in body:
                    shown[name] = body[name]
            if not payment.final:
                shown["nextStep"] = "REDIRECT_TO_AUTH_URL"
                shown["authorizationUrl"] = f"{self.base_url}/authorize/{payment.id}"
        if payment.provider_transaction_id:
            shown["providerTransactionId"] = payment.provider_transaction_id
        if payment.failure_code:
            shown["failureReason"] = {
                "failureCode": payment.failure_code,
                "failureMessage": FAILURE_MESSAGES.get(payment.failure_code, payment.failure_code),
            }
        metadata = body.get("metadata")
        if isinstance(metadata, list) and metadata:
            merged: dict[str, Any] = {}
            for item in metadata:
                merged.update({k: v for k, v in item.items() if k != "isPII"})
            shown["metadata"] = merged
        return shown

    # Callbacks.

    def _notify(self, payment: Payment) -> None:
        """The callback of a payment that reached a final status (or PROCESSING for redirect
        authorisation), per `callback_mode`, off the request thread."""
        if payment.no_callback or self.callback_urls.get(payment.kind) is None:
            return
        snapshot = self.view(payment, callback=True)
        mode = self.callback_mode
        if mode == "drop":
            return
        if mode == "reorder":
            with self._lock:
                held = self._held_back
                if not held:
                    held.append((payment, snapshot))
                    return
                self._held_back = []
            batch = [(payment, snapshot), *held]
        else:
            batch = [(payment, snapshot)] * (2 if mode == "duplicate" else 1)
        delay = self.callback_delay if mode == "delay" else 0.0
        timer = threading.Timer(delay, self._post_callbacks, args=(batch,))
        timer.daemon = True
        timer.start()

    def _post_callbacks(self, batch: list[tuple[Payment, dict[str, Any]]]) -> None:
        for payment, snapshot in batch:
            self._deliver(payment, snapshot)

    def _deliver(self, payment: Payment, snapshot: dict[str, Any]) -> None:
        """POST one callback; on a non-2xx answer or a network error, retry with a doubling
        pause until `callback_retry_for` seconds have passed (or the fake stops)."""
        url = self.callback_urls.get(payment.kind)
        if url is None:
            return
        raw = json.dumps(snapshot).encode()
        deadline = time.monotonic() + self.callback_retry_for
        pause = self.callback_retry_first
        while not self._stopping.is_set():
            if self.signed_callbacks:
                headers = self.signature_headers(url, raw)
            else:
                headers = {"Content-Type": CALLBACK_CONTENT_TYPE}
            answer: int | None = None
            with contextlib.suppress(httpx.HTTPError):
                answer = httpx.post(
                    url, content=raw, headers=headers, timeout=CALLBACK_TIMEOUT
                ).status_code
            with self._lock:
                payment.callbacks_sent += 1
                self.callbacks_attempted.append((payment.kind, payment.id, answer))
            if answer is not None and 200 <= answer < 300:
                return
            if time.monotonic() + pause > deadline:
                return
            if self._stopping.wait(pause):
                return
            pause = min(pause * 2, 10.0)

    def _take_fault(self, path: str, initiation: bool = True) -> str | None:
        with self._lock:
            for fault in self._faults:
                named = fault.path is not None and fault.path in path
                if fault.times > 0 and (named or (fault.path is None and initiation)):
                    fault.times -= 1
                    return fault.kind
        return None

    # Toolkit.

    def active_conf(self, country: str | None, operation: str | None) -> dict[str, Any]:
        countries: dict[str, dict[str, Any]] = {}
        with self._lock:
            providers = list(self.providers.values())
        for p in providers:
            if country and p.country != country:
                continue
            ops = [o for o in p.operations if operation is None or o == operation]
            if not ops:
                continue
            prefix, names, _ = COUNTRIES[p.country]
            entry = countries.setdefault(
                p.country,
                {"country": p.country, "displayName": names, "prefix": prefix, "providers": []},
            )
            operation_types: dict[str, Any] = {}
            for op in ops:
                conf: dict[str, Any] = {}
                if op == "DEPOSIT":
                    conf["authType"] = p.auth_type
                    if p.auth_type == "PROVIDER_AUTH":
                        conf["pinPrompt"] = "AUTOMATIC"
                        conf["pinPromptRevivable"] = False
                    if p.auth_type == "PREAUTH":
                        conf["authTokenInstructions"] = {
                            "channels": [
                                {
                                    "type": "USSD",
                                    "displayName": {"en": "Preauthorization instructions"},
                                    "instructions": {"en": [{"text": "Use OTP"}]},
                                }
                            ]
                        }
                conf.update(
                    minAmount=p.min_amount,
                    maxAmount=p.max_amount,
                    decimalsInAmount=p.decimals,
                    status=p.status_of(op),
                )
                kind = {v: k for k, v in OPERATION.items()}[op]
                if kind in self.callback_urls:
                    conf["callbackUrl"] = self.callback_urls[kind]
                operation_types[op] = conf
            entry["providers"].append(
                {
                    "provider": p.provider,
                    "displayName": p.display_name,
                    "nameDisplayedToCustomer": self.company_name,
                    "currencies": [
                        {
                            "currency": p.currency,
                            "displayName": "CFA",
                            "operationTypes": operation_types,
                        }
                    ],
                }
            )
        return {
            "companyName": self.company_name,
            "signatureConfiguration": {
                "signedRequestsOnly": False,
                "signedCallbacks": self.signed_callbacks,
            },
            "countries": list(countries.values()),
        }

    def availability(self, country: str | None, operation: str | None) -> list[dict[str, Any]]:
        grouped: dict[str, list[dict[str, Any]]] = {}
        with self._lock:
            providers = list(self.providers.values())
        for p in providers:
            if country and p.country != country:
                continue
            ops = {o: p.status_of(o) for o in p.operations if operation is None or o == operation}
            if ops:
                grouped.setdefault(p.country, []).append(
                    {"provider": p.provider, "operationTypes": ops}
                )
        return [{"country": c, "providers": ps} for c, ps in grouped.items()]

    def sanitise(self, raw: str) -> tuple[str, str] | None:
        """(country, MSISDN) of a phone number as a customer typed it, None if not valid."""
        digits = re.sub(r"\D", "", raw)
        for country, (prefix, _, lengths) in COUNTRIES.items():
            if not digits.startswith(prefix):
                continue
            national = digits[len(prefix) :]
            if len(national) - 1 in lengths and national.startswith("0"):
                national = national[1:]
            if len(national) in lengths:
                return country, prefix + national
        return None

    def predict(self, msisdn: str, country: str) -> Provider | None:
        national = msisdn[len(COUNTRIES[country][0]) :]
        if country == "BEN" and len(national) == 10:
            national = national[2:]  # Benin's ten digits: "01" and the former eight
        with self._lock:
            candidates = [p for p in self.providers.values() if p.country == country]
        best: tuple[int, Provider] | None = None
        for p in candidates:
            for prefix in p.prefixes:
                if national.startswith(prefix) and (best is None or len(prefix) > best[0]):
                    best = (len(prefix), p)
        return best[1] if best else None

    def valid_for(self, provider: Provider, msisdn: str) -> bool:
        found = self.sanitise(msisdn)
        return found is not None and found == (provider.country, msisdn)

    # HTTP.

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def _answer(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _refuse(self, status: int, code: str, message: str, **ids: str) -> None:
                self._answer(
                    status,
                    {
                        **ids,
                        "status": "REJECTED",
                        "failureReason": {"failureCode": code, "failureMessage": message},
                    },
                )

            def _hang(self) -> None:
                fake._stopping.wait(120)
                self.close_connection = True

            def _reset(self) -> None:
                # RST instead of FIN: the client sees a reset, with no response at all.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
                self.close_connection = True

            def _wallet_balances(self) -> None:
                fault = fake._take_fault(self.path, initiation=False)
                if fault == "hang":
                    self._hang()
                elif fault == "error_500":
                    self._unknown_error()
                else:
                    self._answer(200, {"balances": fake.wallets()})

            def _unknown_error(self) -> None:
                self._answer(
                    500,
                    {
                        "failureReason": {
                            "failureCode": "UNKNOWN_ERROR",
                            "failureMessage": FAILURE_MESSAGES["UNKNOWN_ERROR"],
                        }
                    },
                )

            def _dispatch(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                    parsed = True
                except ValueError:
                    body, parsed = raw.decode("utf-8", "replace"), False
                with fake._lock:
                    fake.requests.append(
                        Received(
                            self.command,
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                            time.time(),
                        )
                    )
                if self.command == "GET" and self.path.startswith("/files/statements/"):
                    self._download(self.path.rsplit("/", 1)[1].removesuffix(".csv"))
                    return
                if not self._authenticated():
                    return
                self._route(body, parsed)

            def _download(self, statement_id: str) -> None:
                if statement_id not in fake.statements:
                    self._refuse(404, "NOT_FOUND", "No such file.")
                    return
                data = fake._statement_file(statement_id).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/csv")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                self._dispatch()

            def do_GET(self) -> None:
                self._dispatch()

            def _authenticated(self) -> bool:
                header = self.headers.get("Authorization")
                if not header:
                    self._refuse(401, "NO_AUTHENTICATION", "API token not found in headers.")
                    return False
                if header != f"Bearer {fake.api_token}":
                    self._refuse(403, "AUTHENTICATION_ERROR", "The API token is not valid.")
                    return False
                return True

            def _route(self, body: Any, parsed: bool) -> None:
                split = urlsplit(self.path)
                path, query = split.path, parse_qs(split.query)
                method = self.command
                if method == "POST" and (match := _KIND_PATH.match(path)):
                    self._initiate(_PLURAL[match.group(1)], body, parsed)
                elif method == "POST" and (match := _RESEND_PATH.match(path)):
                    self._resend(_PLURAL[match.group(1)], match.group(2))
                elif method == "GET" and (match := _STATUS_PATH.match(path)):
                    self._status(_PLURAL[match.group(1)], match.group(2))
                elif method == "GET" and path == "/v2/active-conf":
                    self._answer(200, fake.active_conf(*self._filters(query)))
                elif method == "GET" and path == "/v2/availability":
                    self._answer(200, fake.availability(*self._filters(query)))
                elif method == "POST" and path == "/v2/predict-provider":
                    self._predict(body, parsed)
                elif method == "GET" and path == "/v2/wallet-balances":
                    self._wallet_balances()
                elif method == "POST" and path == "/v2/statements":
                    self._answer(*fake._new_statement(body))
                elif method == "GET" and path.startswith("/v2/statements/"):
                    self._answer(200, fake._statement(path.rsplit("/", 1)[1]))
                elif method == "GET" and path == "/v2/public-key/http":
                    time.sleep(fake.public_key_delay)
                    self._answer(200, [{"id": KEY_ID, "key": fake.public_key_pem}])
                else:
                    self._refuse(404, "NOT_FOUND", f"No such endpoint: {method} {path}.")

            @staticmethod
            def _filters(query: dict[str, list[str]]) -> tuple[str | None, str | None]:
                country, operation = query.get("country"), query.get("operationType")
                return (country[0] if country else None), (operation[0] if operation else None)

            # Initiation.

            def _initiate(self, kind: str, body: Any, parsed: bool) -> None:
                fault = fake._take_fault(self.path)
                if fault == "hang":
                    self._hang()
                    return
                if fault == "error_500":
                    self._unknown_error()
                    return
                id_field = ID_FIELD[kind]
                ids: dict[str, str] = {}
                if isinstance(body, dict) and isinstance(body.get(id_field), str):
                    ids = {id_field: body[id_field]}
                try:
                    payment = self._accept(kind, body, parsed)
                except Rejected as refused:
                    self._refuse(refused.http, refused.code, refused.message, **ids)
                    return
                if payment is None:
                    self._answer(200, {**ids, "status": "DUPLICATE_IGNORED"})
                    return
                if fault == "error_500_after_accept":
                    self._unknown_error()
                elif fault == "reset_after_accept":
                    self._reset()
                elif fault == "hang_after_accept":
                    self._hang()
                else:
                    answer: dict[str, Any] = {id_field: payment.id, "status": "ACCEPTED"}
                    if kind == "deposit":
                        redirect = payment.provider.auth_type == "REDIRECT_AUTH"
                        answer["nextStep"] = "GET_AUTH_URL" if redirect else "FINAL_STATUS"
                    answer["created"] = payment.created
                    self._answer(200, answer)
                if payment.final or (
                    payment.provider.auth_type == "REDIRECT_AUTH" and kind == "deposit"
                ):
                    fake._notify(payment)

            def _accept(self, kind: str, body: Any, parsed: bool) -> Payment | None:
                """The payment recorded and decided (unless held), None for a duplicate."""
                if not parsed or not isinstance(body, dict):
                    raise Rejected(400, "INVALID_INPUT", "Unable to parse the request payload.")
                id_field = ID_FIELD[kind]
                for name in body:
                    if name not in _ALLOWED_FIELDS[kind]:
                        raise Rejected(400, "UNSUPPORTED_PARAMETER", f"'{name}' is not supported.")
                if id_field not in body:
                    raise Rejected(400, "MISSING_PARAMETER", f"'{id_field}' is required.")
                if not is_uuid4(body[id_field]):
                    raise Rejected(400, "INVALID_PARAMETER", f"'{id_field}' must be a UUIDv4.")
                with fake._lock:
                    if body[id_field] in fake._store(kind):
                        return None
                    build = self._refund if kind == "refund" else self._payment_of(kind)
                    payment = build(body)
                    fake._store(kind)[payment.id] = payment
                    self._decide(payment)
                    return payment

            def _common(self, kind: str, body: dict[str, Any]) -> None:
                required = ["amount", "currency"] if kind != "refund" else ["depositId"]
                if kind != "refund":
                    required.append(PARTY_FIELD[kind])
                for name in required:
                    if name not in body:
                        raise Rejected(400, "MISSING_PARAMETER", f"'{name}' is required.")
                amount = body.get("amount")
                if "amount" in body and (
                    not isinstance(amount, str)
                    or not 1 <= len(amount) <= 23
                    or not _AMOUNT.match(amount)
                ):
                    raise Rejected(400, "INVALID_PARAMETER", "'amount' is not a valid amount.")
                currency = body.get("currency")
                if "currency" in body and (
                    not isinstance(currency, str) or not _CURRENCY.match(currency)
                ):
                    raise Rejected(400, "INVALID_PARAMETER", "'currency' must be ISO 4217.")
                message = body.get("customerMessage")
                if message is not None and (
                    not isinstance(message, str) or not _MESSAGE.match(message)
                ):
                    raise Rejected(
                        400, "INVALID_PARAMETER", "'customerMessage' must be 4 to 22 characters."
                    )
                reference = body.get("clientReferenceId")
                if reference is not None and not isinstance(reference, str):
                    raise Rejected(400, "INVALID_PARAMETER", "'clientReferenceId' is a string.")
                metadata = body.get("metadata")
                if metadata is not None:
                    if (
                        not isinstance(metadata, list)
                        or len(metadata) > 10
                        or not all(isinstance(m, dict) for m in metadata)
                    ):
                        raise Rejected(400, "INVALID_PARAMETER", "'metadata' is not valid.")
                    seen: set[str] = set()
                    for item in metadata:
                        for name in item:
                            if name == "isPII":
                                continue
                            if name in seen:
                                raise Rejected(
                                    400, "DUPLICATE_METADATA_FIELD", f"'{name}' is repeated."
                                )
                            seen.add(name)

            def _payment_of(self, kind: str) -> Callable[[dict[str, Any]], Payment]:
                return lambda body: self._payment(kind, body)

            def _payment(self, kind: str, body: dict[str, Any]) -> Payment:
                self._common(kind, body)
                party = body[PARTY_FIELD[kind]]
                details = party.get("accountDetails") if isinstance(party, dict) else None
                if not isinstance(details, dict):
                    raise Rejected(400, "MISSING_PARAMETER", "'accountDetails' is required.")
                if party.get("type") != "MMO":
                    raise Rejected(400, "INVALID_PARAMETER", "'type' must be MMO.")
                for name in ("phoneNumber", "provider"):
                    if not isinstance(details.get(name), str):
                        raise Rejected(400, "MISSING_PARAMETER", f"'{name}' is required.")
                provider = fake.providers.get(details["provider"])
                if provider is None:
                    raise Rejected(200, "INVALID_PROVIDER", "The provider is not valid.")
                operation = OPERATION[kind]
                if operation not in provider.operations:
                    raise Rejected(
                        403, NOT_ALLOWED[kind], f"Not enabled for '{provider.provider}'."
                    )
                phone = details["phoneNumber"]
                if not phone.isdigit() or not fake.valid_for(provider, phone):
                    raise Rejected(
                        200, "INVALID_PHONE_NUMBER", "The phone number is not a valid MSISDN."
                    )
                amount = self._amount(provider, operation, body["amount"], body["currency"])
                if kind == "deposit" and provider.auth_type == "PREAUTH":
                    code = body.get("preAuthorisationCode")
                    if not isinstance(code, str) or not code:
                        raise Rejected(
                            400,
                            "MISSING_PARAMETER",
                            f"'preAuthorisationCode' is required for '{provider.provider}'.",
                        )
                return Payment(
                    id=body[ID_FIELD[kind]],
                    kind=kind,
                    body=body,
                    provider=provider,
                    phone_number=phone,
                    amount=amount,
                    currency=body["currency"],
                    created=now_iso(),
                )

            def _amount(
                self, provider: Provider, operation: str, text: str, currency: str
            ) -> Decimal:
                if currency != provider.currency:
                    raise Rejected(
                        200,
                        "INVALID_CURRENCY",
                        f"The currency '{currency}' is not supported with provider "
                        f"'{provider.provider}'.",
                    )
                if provider.status_of(operation) == "CLOSED":
                    raise Rejected(
                        200,
                        "PROVIDER_TEMPORARILY_UNAVAILABLE",
                        f"The provider '{provider.provider}' is currently not able to process "
                        "payments.",
                    )
                places = len(text.partition(".")[2])
                if places > (2 if provider.decimals == "TWO_PLACES" else 0):
                    raise Rejected(
                        200,
                        "INVALID_AMOUNT",
                        f"The provider {provider.provider} does not support that many decimal "
                        "places in amount.",
                    )
                amount = Decimal(text)
                if not Decimal(provider.min_amount) <= amount <= Decimal(provider.max_amount):
                    raise Rejected(
                        200,
                        "AMOUNT_OUT_OF_BOUNDS",
                        f"The amount needs to be more than '{provider.min_amount}' and less "
                        f"than '{provider.max_amount}' for provider '{provider.provider}'.",
                    )
                return amount

            def _refund(self, body: dict[str, Any]) -> Payment:
                self._common("refund", body)
                deposit_id = body["depositId"]
                if not is_uuid4(deposit_id):
                    raise Rejected(400, "INVALID_PARAMETER", "'depositId' must be a UUIDv4.")
                deposit = fake.deposits.get(deposit_id)
                if deposit is None:
                    raise Rejected(200, "NOT_FOUND", f"Deposit with ID {deposit_id} not found.")
                if deposit.status != "COMPLETED":
                    raise Rejected(
                        200, "INVALID_STATE", f"Deposit with ID {deposit_id} is not completed."
                    )
                if "REFUND" not in deposit.provider.operations:
                    raise Rejected(403, "REFUNDS_NOT_ALLOWED", "Refunds are not enabled.")
                siblings = [r for r in fake.refunds.values() if r.deposit_id == deposit_id]
                if any(not r.final for r in siblings):
                    raise Rejected(
                        200,
                        "REFUND_IN_PROGRESS",
                        "Another refund transaction is already in progress",
                    )
                refunded = sum((r.amount for r in siblings if r.status == "COMPLETED"), Decimal(0))
                left = deposit.amount - refunded
                if left <= 0:
                    raise Rejected(
                        200,
                        "DEPOSIT_ALREADY_REFUNDED",
                        "Requested deposit has been already refunded",
                    )
                if "amount" in body:
                    currency = body.get("currency", deposit.currency)
                    amount = self._amount(deposit.provider, "REFUND", body["amount"], currency)
                    if amount > left:
                        raise Rejected(
                            200, "AMOUNT_TOO_LARGE", f"Amount should not be greater than {left}"
                        )
                else:
                    amount = left
                return Payment(
                    id=body["refundId"],
                    kind="refund",
                    body=body,
                    provider=deposit.provider,
                    phone_number=deposit.phone_number,
                    amount=amount,
                    currency=deposit.currency,
                    created=now_iso(),
                    deposit_id=deposit_id,
                )

            def _decide(self, payment: Payment) -> None:
                operation = OPERATION[payment.kind]
                if payment.kind != "deposit" and payment.provider.status_of(operation) == "DELAYED":
                    payment.status = "ENQUEUED"
                    return
                payment.status = fake.in_flight_status
                if payment.kind == "deposit" and payment.provider.auth_type == "REDIRECT_AUTH":
                    payment.status = "PROCESSING"
                if fake.hold:
                    return
                status, code = fake._outcome(payment)
                wanted = fake.preauthorisation_code
                if (
                    payment.kind == "deposit"
                    and payment.provider.auth_type == "PREAUTH"
                    and wanted is not None
                    and payment.body.get("preAuthorisationCode") != wanted
                ):
                    status, code = "FAILED", "PAYMENT_NOT_APPROVED"
                if status in FINAL:
                    if payment.provider.auth_type == "REDIRECT_AUTH" and payment.kind == "deposit":
                        # The PROCESSING callback first, the final one after it.
                        later = threading.Timer(0.05, fake.settle, (payment.id, status, code))
                        later.daemon = True
                        later.start()
                        return
                    fake._finish(payment, status, code)
                else:
                    payment.status = status if status != "PROCESSING" else fake.in_flight_status
                    payment.no_callback = True

            # Status, resend, toolkit.

            def _status(self, kind: str, payment_id: str) -> None:
                if not is_uuid4(payment_id):
                    self._refuse(400, "INVALID_PARAMETER", f"'{ID_FIELD[kind]}' must be a UUIDv4.")
                    return
                with fake._lock:
                    payment = fake._store(kind).get(payment_id)
                    shown = fake.view(payment) if payment is not None else None
                if shown is None:
                    self._answer(200, {"status": "NOT_FOUND"})
                else:
                    self._answer(200, {"status": "FOUND", "data": shown})

            def _resend(self, kind: str, payment_id: str) -> None:
                id_field = ID_FIELD[kind]
                with fake._lock:
                    fake.resend_requests.append((kind, payment_id))
                    payment = fake._store(kind).get(payment_id)
                if payment is None:
                    self._refuse(
                        200,
                        "NOT_FOUND",
                        f"{kind.capitalize()} with ID {payment_id} not found",
                        **{id_field: payment_id},
                    )
                    return
                if not payment.final:
                    self._refuse(
                        200,
                        "INVALID_STATE",
                        f"{kind.capitalize()} with ID {payment_id} has not finished processing",
                        **{id_field: payment_id},
                    )
                    return
                self._answer(200, {id_field: payment_id, "status": "ACCEPTED"})
                snapshot = fake.view(payment, callback=True)
                if fake.callback_urls.get(kind) is not None:
                    threading.Thread(
                        target=fake._deliver, args=(payment, snapshot), daemon=True
                    ).start()

            def _predict(self, body: Any, parsed: bool) -> None:
                if not parsed or not isinstance(body, dict):
                    self._refuse(400, "INVALID_INPUT", "Unable to parse the request payload.")
                    return
                number = body.get("phoneNumber")
                if not isinstance(number, str):
                    self._refuse(400, "MISSING_PARAMETER", "'phoneNumber' is required.")
                    return
                found = fake.sanitise(number)
                provider = fake.predict(found[1], found[0]) if found else None
                if found is None or provider is None:
                    self._refuse(
                        400, "INVALID_PHONE_NUMBER", "The phone number is not a valid MSISDN."
                    )
                    return
                self._answer(
                    200,
                    {"country": found[0], "provider": provider.provider, "phoneNumber": found[1]},
                )

        return Handler


# Run on its own (`python -m tests.fakes.pawapay`): a rehearsal of a connector's set-up.


def rehearsal(options: runner.Options) -> runner.Rehearsal:
    url = options.callback_url
    fake = PawapayFake(
        api_token="fake-pawapay-api-token",
        callback_urls={"deposit": url, "payout": url, "refund": url},
        signed_callbacks=True,
        host=options.host,
        port=options.port,
    )
    return runner.Rehearsal(
        fake=fake,
        kind="pawapay",
        environment="sandbox",
        base_url=fake.base_url,
        settings={"signed_callbacks": "true"},
        secrets={"api_token": "fake-pawapay-api-token"},
        routes={"moov": ("collect", "disburse", "refund")},
        payment={"amount": 5000, "operator": "moov", "phone_number": "22995123456"},
        callbacks=f"deposits, payouts and refunds POSTed to {url}, signed (RFC 9421), as set "
        "in pawaPay's dashboard (--cauri, --name or --callback-url to change it)",
        notes=("any number completes; pawaPay's sandbox test numbers decide other outcomes",),
    )


if __name__ == "__main__":
    raise SystemExit(
        runner.main(
            rehearsal,
            description="pawaPay Merchant API v2's contract fake, on its own.",
            name="pawapay-fake",
        )
    )
