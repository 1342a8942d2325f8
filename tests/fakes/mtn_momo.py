"""A contract fake of MTN's MoMo Open API (collection, disbursement, refund), over real HTTP
on loopback, for the connector's end-to-end tests. It reproduces what MTN documents (sources
in docs/OPERATORS.md, "MTN MoMo Open API"), faults included; it is not shaped to Cauri.

Reproduced:
- tokens per product: `POST /{product}/token/`, HTTP Basic (API user and key) plus the
  product's `Ocp-Apim-Subscription-Key`; `{access_token, token_type, expires_in}`; a wrong
  subscription key is the gateway's 401 (`{statusCode, message}`), wrong credentials a 401;
  an expired or unknown bearer token a 401;
- `POST /collection/v1_0/requesttopay`, `/disbursement/v1_0/transfer`,
  `/disbursement/v1_0/refund` (and `v2_0`): `X-Reference-Id` a UUID v4 (else 400),
  `X-Target-Environment` the account's (else 403 NOT_ALLOWED_TARGET_ENVIRONMENT), an optional
  `X-Callback-Url`; 202 with no body; a reused reference 409 RESOURCE_ALREADY_EXIST; a body
  that is not valid 400; a currency other than the account's 500 INVALID_CURRENCY (the
  sandbox takes EUR only); a refund of an unknown or unsettled collection 500
  RESOURCE_NOT_FOUND / NOT_ALLOWED;
- `GET …/{referenceId}`: the transaction (`amount`, `currency`, `externalId`, `payer` or
  `payee`, `payerMessage`, `payeeNote`, `status` PENDING | SUCCESSFUL | FAILED,
  `financialTransactionId` once successful, `reason` once failed, as a string or as
  `{code, message}`: `reason_shape`); an unknown reference 404 RESOURCE_NOT_FOUND;
- `GET /{product}/v1_0/account/balance`: `{availableBalance, currency}`, the product's own
  account: `opening_balance`, plus each successful collection (collection), less each
  successful transfer and refund (disbursement; MTN takes no fee from the account here);
- the sandbox's test numbers (payer or payee): 46733123450 failed, 46733123451 rejected,
  46733123452 timed out, 46733123453 successful, 46733123454 pending; any other successful;
- unsigned callbacks to `X-Callback-Url` once a transaction is final (PUT, the body of its
  status query), with modes to drop, delay, duplicate and reorder them, and forged ones;
- faults for the next requests: hang, 500 before or after the request is accepted, a
  connection reset after it is accepted, a hang after it is accepted (hang and 500 on a
  balance too, for a fault whose path names it); a rate limit on status queries (429).
Not reproduced: provisioning (`/v1_0/apiuser`), remittances, pre-approvals, account holder
lookups.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import secrets
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from tests.fakes import CALLBACK_TIMEOUT, runner

TEST_NUMBERS = {
    "46733123450": ("FAILED", "INTERNAL_PROCESSING_ERROR"),
    "46733123451": ("FAILED", "APPROVAL_REJECTED"),
    "46733123452": ("FAILED", "EXPIRED"),
    "46733123453": ("SUCCESSFUL", None),
    "46733123454": ("PENDING", None),
}
REASON_MESSAGES = {
    "APPROVAL_REJECTED": "The payer rejected the request.",
    "EXPIRED": "The request expired before it was approved.",
    "INTERNAL_PROCESSING_ERROR": "An internal error caused the operation to fail.",
    "PAYER_NOT_FOUND": "The payer was not found.",
    "PAYEE_NOT_FOUND": "The payee was not found.",
    "NOT_ENOUGH_FUNDS": "The payer does not have enough funds.",
}
NOT_FOUND_MESSAGE = "Requested resource was not found."
RATE_LIMITED_MESSAGE = "Rate limit is exceeded. Try again in 1 seconds."
_PATHS = {
    ("collection", "requesttopay"): "collect",
    ("disbursement", "transfer"): "transfer",
    ("disbursement", "refund"): "refund",
}
_REQUEST = re.compile(r"^/(collection|disbursement)/v[12]_0/(requesttopay|transfer|refund)$")
_STATUS = re.compile(r"^/(collection|disbursement)/v[12]_0/(requesttopay|transfer|refund)/([^/]+)$")
_AMOUNT = re.compile(r"^[0-9]+(\.[0-9]+)?$")


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any
    at: float


@dataclass
class Transaction:
    reference: str
    product: str
    kind: str  # collect | transfer | refund
    body: dict[str, Any]
    callback_url: str | None
    status: str = "PENDING"
    reason: str | None = None
    financial_id: str | None = None
    callbacks_sent: int = 0

    @property
    def party(self) -> str:
        party = self.body.get("payer") or self.body.get("payee") or {}
        return str(party.get("partyId", ""))


@dataclass
class Fault:
    kind: str  # hang | error_500 | error_500_after_accept | reset_after_accept | hang_after_accept
    times: int
    path: str | None  # a substring of the path it applies to; None: any POST


class MtnMomoFake:
    def __init__(
        self,
        *,
        api_user: str,
        api_key: str,
        subscription_keys: dict[str, str],
        target_environment: str = "sandbox",
        currency: str = "EUR",
        token_ttl: int = 3600,
        host: str = "127.0.0.1",  # loopback; a port of 0 is a free one
        port: int = 0,
    ) -> None:
        self.api_user, self.api_key = api_user, api_key
        self.subscription_keys = subscription_keys
        self.target_environment, self.currency = target_environment, currency
        self.token_ttl = token_ttl
        self.requests: list[Received] = []
        self.transactions: dict[str, Transaction] = {}
        self.tokens_issued: Counter[str] = Counter()
        self.reason_shape = "object"  # or "string"
        self.opening_balance = Decimal(1_000_000)  # each product's account, before any request
        self.callback_mode = "send"  # send | drop | delay | duplicate | reorder
        self.callback_delay = 0.5
        self.callback_method = "PUT"
        self.hold = False  # transactions stay PENDING until settle()
        self.status_rate_limit: int | None = None  # status queries a second, then 429
        self._outcomes: dict[str, tuple[str, str | None]] = {}
        self._tokens: dict[str, tuple[str, float]] = {}
        self._faults: list[Fault] = []
        self._held_back: list[Transaction] = []
        self._status_times: list[float] = []
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self.base_url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> MtnMomoFake:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # What tests steer.

    def outcome_for(self, msisdn: str, status: str, reason: str | None = None) -> None:
        """Requests for this number end in `status` (SUCCESSFUL, FAILED or PENDING)."""
        self._outcomes[msisdn] = (status, reason)

    def fault(self, kind: str, *, times: int = 1, path: str | None = None) -> None:
        self._faults.append(Fault(kind, times, path))

    def settle(self, reference: str, status: str = "SUCCESSFUL", reason: str | None = None) -> None:
        """Decides a pending transaction now (the customer approved or declined)."""
        with self._lock:
            transaction = self.transactions[reference]
            if transaction.status != "PENDING":
                return
            self._finish(transaction, status, reason)
        self._notify(transaction)

    def send_forged_callback(self, url: str, body: dict[str, Any]) -> int:
        """What anyone on the Internet can send to a callback URL: MTN signs nothing."""
        return httpx.request(
            self.callback_method, url, json=body, timeout=CALLBACK_TIMEOUT
        ).status_code

    def received(self, kind: str) -> list[Transaction]:
        with self._lock:
            return [t for t in self.transactions.values() if t.kind == kind]

    def posts(self, kind: str) -> list[Received]:
        """Every request of that kind received, accepted or not (re-sends included)."""
        segment = {"collect": "requesttopay", "transfer": "transfer", "refund": "refund"}[kind]
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path.endswith(segment)]

    # The transactions.

    def _outcome(self, transaction: Transaction) -> tuple[str, str | None]:
        if transaction.kind == "refund":
            return self._outcomes.get(transaction.party, ("SUCCESSFUL", None))
        number = transaction.party
        return self._outcomes.get(number) or TEST_NUMBERS.get(number, ("SUCCESSFUL", None))

    def _finish(self, transaction: Transaction, status: str, reason: str | None) -> None:
        transaction.status = status
        if status == "SUCCESSFUL":
            transaction.financial_id = str(secrets.randbelow(10**9))
        elif status == "FAILED":
            transaction.reason = reason or "INTERNAL_PROCESSING_ERROR"

    def view(self, transaction: Transaction) -> dict[str, Any]:
        body = transaction.body
        shown: dict[str, Any] = {
            "amount": body.get("amount"),
            "currency": body.get("currency"),
            "externalId": body.get("externalId"),
            "payerMessage": body.get("payerMessage"),
            "payeeNote": body.get("payeeNote"),
            "status": transaction.status,
        }
        for party in ("payer", "payee"):
            if party in body:
                shown[party] = body[party]
        if transaction.kind == "refund":
            shown["referenceIdToRefund"] = body.get("referenceIdToRefund")
        if transaction.financial_id:
            shown["financialTransactionId"] = transaction.financial_id
        if transaction.reason:
            shown["reason"] = (
                transaction.reason
                if self.reason_shape == "string"
                else {
                    "code": transaction.reason,
                    "message": REASON_MESSAGES.get(transaction.reason, transaction.reason),
                }
            )
        return shown

    def _notify(self, transaction: Transaction) -> None:
        """The callback of a final transaction, per `callback_mode`, off the request thread."""
        if transaction.callback_url is None or transaction.status == "PENDING":
            return
        mode = self.callback_mode
        if mode == "drop":
            return
        if mode == "reorder":
            with self._lock:
                held = self._held_back
                if not held:
                    held.append(transaction)
                    return
                self._held_back = []
            batch = [transaction, *held]
        else:
            batch = [transaction] * (2 if mode == "duplicate" else 1)
        delay = self.callback_delay if mode == "delay" else 0.0
        threading.Timer(delay, self._post_callbacks, args=(batch,)).start()

    def _post_callbacks(self, batch: list[Transaction]) -> None:
        for transaction in batch:
            assert transaction.callback_url is not None
            with contextlib.suppress(httpx.HTTPError):  # MTN does not retry its callbacks
                httpx.request(
                    self.callback_method,
                    transaction.callback_url,
                    json=self.view(transaction),
                    timeout=CALLBACK_TIMEOUT,
                )
            with self._lock:
                transaction.callbacks_sent += 1

    def balance(self, product: str) -> Decimal:
        """The product's account: what its successful requests moved since the opening."""
        sign = 1 if product == "collection" else -1
        with self._lock:
            moved = sum(
                (
                    Decimal(t.body["amount"])
                    for t in self.transactions.values()
                    if t.product == product and t.status == "SUCCESSFUL"
                ),
                Decimal(0),
            )
        return self.opening_balance + sign * moved

    def _take_fault(self, path: str, method: str = "POST") -> str | None:
        with self._lock:
            for fault in self._faults:
                named = fault.path is not None and fault.path in path
                if fault.times > 0 and (named or (fault.path is None and method == "POST")):
                    fault.times -= 1
                    return fault.kind
        return None

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

            def _read(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return raw.decode("utf-8", "replace")

            def _hang(self) -> None:
                fake._stopping.wait(120)
                self.close_connection = True

            def _reset(self) -> None:
                # RST instead of FIN: the client sees a reset, with no response at all.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
                self.close_connection = True

            def _dispatch(self, handle: Callable[[Any], None]) -> None:
                body = self._read() if self.command == "POST" else None
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
                handle(body)

            def do_POST(self) -> None:
                self._dispatch(self._post)

            def do_GET(self) -> None:
                self._dispatch(self._get)

            def _product_of(self, path: str) -> str | None:
                product = path.strip("/").split("/")[0]
                return product if product in fake.subscription_keys else None

            def _gateway_allows(self, product: str) -> bool:
                if self.headers.get("Ocp-Apim-Subscription-Key") != fake.subscription_keys[product]:
                    self._answer(
                        401,
                        {
                            "statusCode": 401,
                            "message": "Access denied due to invalid subscription key. Make "
                            "sure to provide a valid key for an active subscription.",
                        },
                    )
                    return False
                return True

            def _token_allows(self, product: str) -> bool:
                if not self._gateway_allows(product):
                    return False
                presented = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                with fake._lock:
                    held = fake._tokens.get(presented)
                if held is None or held[0] != product or held[1] < time.time():
                    self._answer(
                        401, {"statusCode": 401, "message": "Access denied due to invalid token."}
                    )
                    return False
                if self.headers.get("X-Target-Environment") != fake.target_environment:
                    self._answer(
                        403,
                        {
                            "code": "NOT_ALLOWED_TARGET_ENVIRONMENT",
                            "message": "Access to target environment is forbidden.",
                        },
                    )
                    return False
                return True

            def _token(self, product: str) -> None:
                if not self._gateway_allows(product):
                    return
                expected = base64.b64encode(f"{fake.api_user}:{fake.api_key}".encode()).decode()
                if self.headers.get("Authorization") != f"Basic {expected}":
                    self._answer(401, {"error": "login_failed"})
                    return
                value = secrets.token_urlsafe(32)
                with fake._lock:
                    fake._tokens[value] = (product, time.time() + fake.token_ttl)
                    fake.tokens_issued[product] += 1
                self._answer(
                    200,
                    {
                        "access_token": value,
                        "token_type": "access_token",
                        "expires_in": fake.token_ttl,
                    },
                )

            def _post(self, body: Any) -> None:
                path = self.path
                product = self._product_of(path)
                if product is not None and path == f"/{product}/token/":
                    self._token(product)
                    return
                match = _REQUEST.match(path)
                if product is None or match is None:
                    self._answer(404, {"code": "RESOURCE_NOT_FOUND", "message": "No such route."})
                    return
                fault = fake._take_fault(path)
                if fault == "hang":
                    self._hang()
                    return
                if fault == "error_500":
                    self._answer(500, {"code": "INTERNAL_PROCESSING_ERROR", "message": "Error."})
                    return
                if not self._token_allows(product):
                    return
                kind = _PATHS[(match.group(1), match.group(2))]
                refused = self._invalid(kind, body)
                if refused is not None:
                    self._answer(*refused)
                    return
                reference = self.headers.get("X-Reference-Id", "")
                with fake._lock:
                    if reference in fake.transactions:
                        self._answer(
                            409,
                            {
                                "code": "RESOURCE_ALREADY_EXIST",
                                "message": "Duplicated reference id. Creation of resource failed.",
                            },
                        )
                        return
                    transaction = Transaction(
                        reference, product, kind, body, self.headers.get("X-Callback-Url")
                    )
                    fake.transactions[reference] = transaction
                    if not fake.hold:
                        status, reason = fake._outcome(transaction)
                        if status != "PENDING":
                            fake._finish(transaction, status, reason)
                if fault == "error_500_after_accept":
                    self._answer(500, {"code": "INTERNAL_PROCESSING_ERROR", "message": "Error."})
                elif fault == "reset_after_accept":
                    self._reset()
                elif fault == "hang_after_accept":
                    self._hang()
                else:
                    self._answer(202)
                fake._notify(transaction)

            def _invalid(self, kind: str, body: Any) -> tuple[int, dict[str, Any]] | None:
                try:
                    uuid.UUID(self.headers.get("X-Reference-Id", ""), version=4)
                except ValueError:
                    return 400, {
                        "code": "INVALID_REFERENCE_ID",
                        "message": "Invalid X-Reference-Id.",
                    }
                if not isinstance(body, dict) or not _AMOUNT.match(str(body.get("amount", ""))):
                    return 400, {"code": "INVALID_AMOUNT", "message": "Invalid amount."}
                if body.get("currency") != fake.currency:
                    return 500, {"code": "INVALID_CURRENCY", "message": "Currency not supported."}
                if kind == "refund":
                    original = fake.transactions.get(str(body.get("referenceIdToRefund")))
                    if original is None or original.kind != "collect":
                        return 500, {"code": "RESOURCE_NOT_FOUND", "message": "Not found."}
                    if original.status != "SUCCESSFUL":
                        return 500, {"code": "NOT_ALLOWED", "message": "Not refundable."}
                    return None
                party = body.get("payer" if kind == "collect" else "payee")
                if not (
                    isinstance(party, dict)
                    and party.get("partyIdType") == "MSISDN"
                    and str(party.get("partyId", "")).isdigit()
                ):
                    return 400, {"code": "INVALID_PARTY", "message": "Invalid party."}
                return None

            def _get(self, _: Any) -> None:
                path = self.path
                product = self._product_of(path)
                if product is None:
                    self._answer(404, {"code": "RESOURCE_NOT_FOUND", "message": "No such route."})
                    return
                if path == f"/{product}/v1_0/account/balance":
                    self._balance(product)
                    return
                match = _STATUS.match(path)
                if match is None:
                    self._answer(404, {"code": "RESOURCE_NOT_FOUND", "message": "No such route."})
                    return
                if self._limited():
                    return
                if not self._token_allows(product):
                    return
                with fake._lock:
                    transaction = fake.transactions.get(match.group(3))
                    wanted = _PATHS[(match.group(1), match.group(2))]
                    if transaction is None or transaction.kind != wanted:
                        found = None
                    else:
                        found = fake.view(transaction)
                if found is None:
                    self._answer(
                        404,
                        {
                            "code": "RESOURCE_NOT_FOUND",
                            "message": "Requested resource was not found.",
                        },
                    )
                    return
                self._answer(200, found)

            def _balance(self, product: str) -> None:
                fault = fake._take_fault(self.path, "GET")
                if fault == "hang":
                    self._hang()
                elif fault == "error_500":
                    self._answer(500, {"code": "INTERNAL_PROCESSING_ERROR", "message": "Error."})
                elif self._token_allows(product):
                    shown = format(fake.balance(product), "f")
                    self._answer(200, {"availableBalance": shown, "currency": fake.currency})

            def _limited(self) -> bool:
                limit = fake.status_rate_limit
                if limit is None:
                    return False
                now = time.time()
                with fake._lock:
                    fake._status_times = [t for t in fake._status_times if t > now - 1]
                    over = len(fake._status_times) >= limit
                    fake._status_times.append(now)
                if over:
                    self._answer(
                        429,
                        {
                            "statusCode": 429,
                            "message": "Rate limit is exceeded. Try again in 1 seconds.",
                        },
                    )
                return over

        return Handler


# Run on its own (`python -m tests.fakes.mtn_momo`): a rehearsal of a connector's set-up.

REHEARSAL_API_USER = "5f1c4a2e-8d3b-4c6a-9e7f-0a1b2c3d4e5f"  # a UUID, as MTN provisions one
REHEARSAL_SUBSCRIPTION_KEYS = {
    "collection": "fake-collection-primary-key",
    "disbursement": "fake-disbursement-primary-key",
}


def rehearsal(options: runner.Options) -> runner.Rehearsal:
    fake = MtnMomoFake(
        api_user=REHEARSAL_API_USER,
        api_key="fake-mtn-api-key",
        subscription_keys=REHEARSAL_SUBSCRIPTION_KEYS,
        host=options.host,
        port=options.port,
    )
    return runner.Rehearsal(
        fake=fake,
        kind="mtn_momo",
        environment="sandbox",
        base_url=fake.base_url,
        settings={"target_environment": "sandbox", "currency": "EUR"},
        secrets={
            "api_user": REHEARSAL_API_USER,
            "api_key": "fake-mtn-api-key",
            "collection_subscription_key": REHEARSAL_SUBSCRIPTION_KEYS["collection"],
            "disbursement_subscription_key": REHEARSAL_SUBSCRIPTION_KEYS["disbursement"],
        },
        routes={"mtn": ("collect", "disburse", "refund")},
        payment={"amount": 5000, "operator": "mtn", "phone_number": "22997123456"},
        callbacks="a PUT to each request's X-Callback-Url, which Cauri names from "
        "CAURI_PUBLIC_URL (`cauri serve` on loopback sets it to its own address)",
        notes=("the customer approves at once; MTN's sandbox numbers decide other outcomes",),
    )


if __name__ == "__main__":
    raise SystemExit(
        runner.main(
            rehearsal,
            description="MTN MoMo Open API's contract fake, on its own.",
            name="mtn-fake",
        )
    )
