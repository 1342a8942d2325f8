"""pawaPay's contract fake, driven as pawaPay's docs tell a client to drive pawaPay (Merchant
API v2): so that what the connector's tests prove holds against what pawaPay documents
(docs/research/pawapay.md)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.fakes.pawapay import UNVERIFIED_PROVIDERS, PawapayFake

TOKEN = "sandbox-api-token"
BENIN_OK = "22951345789"


class Receiver:
    """Where the fake's callbacks land: (path, headers, raw body) of each, in order. It answers
    `answers` in turn (then 200)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, str], bytes]] = []
        self.answers: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                receiver.calls.append(
                    (self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
                )
                status = receiver.answers.pop(0) if receiver.answers else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def urls(self) -> dict[str, str]:
        return {kind: f"{self.base}/pawapay/{kind}" for kind in ("deposit", "payout", "refund")}

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(raw) for _, _, raw in self.calls]

    def wait(self, count: int, timeout: float = 5) -> None:
        deadline = time.monotonic() + timeout
        while len(self.calls) < count:
            assert time.monotonic() < deadline, self.calls
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
def fake(receiver: Receiver) -> Iterator[PawapayFake]:
    with PawapayFake(api_token=TOKEN, callback_urls=receiver.urls()) as fake:
        yield fake


def call(
    fake: PawapayFake,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = TOKEN,
    timeout: float = 2,
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"{fake.base_url}{path}"
    return httpx.request(method, url, json=body, headers=headers, timeout=timeout)


def deposit_body(
    number: str = BENIN_OK, provider: str = "MTN_MOMO_BEN", **extra: Any
) -> dict[str, Any]:
    return {
        "depositId": str(uuid.uuid4()),
        "amount": "1000",
        "currency": "XOF",
        "payer": {"type": "MMO", "accountDetails": {"phoneNumber": number, "provider": provider}},
    } | extra


def payout_body(number: str = BENIN_OK, provider: str = "MTN_MOMO_BEN") -> dict[str, Any]:
    return {
        "payoutId": str(uuid.uuid4()),
        "amount": "1000",
        "currency": "XOF",
        "recipient": {
            "type": "MMO",
            "accountDetails": {"phoneNumber": number, "provider": provider},
        },
    }


def deposit(fake: PawapayFake, **kwargs: Any) -> tuple[str, httpx.Response]:
    body = deposit_body(**kwargs)
    return body["depositId"], call(fake, "POST", "/v2/deposits", body)


def status(fake: PawapayFake, kind: str, payment_id: str) -> dict[str, Any]:
    answer: dict[str, Any] = call(fake, "GET", f"/v2/{kind}s/{payment_id}").json()
    return answer


def verify(fake: PawapayFake, path: str, headers: dict[str, str], raw: bytes) -> bool:
    """A callback checked as pawaPay's docs say: the Content-Digest of the body, then the
    signature over the base built from Signature-Input, with the key from /v2/public-key/http."""
    algorithm, _, encoded = headers["content-digest"].partition("=")
    digest = {"sha-512": hashlib.sha512, "sha-256": hashlib.sha256}[algorithm](raw).digest()
    if encoded.strip(":") != base64.b64encode(digest).decode():
        return False
    name, _, params = headers["signature-input"].partition("=")
    components = re.findall(r'"([^"]+)"', params[: params.index(")")])
    keyid = re.search(r'keyid="([^"]+)"', params)
    assert keyid is not None
    keys = call(fake, "GET", "/v2/public-key/http").json()
    pem = next(k["key"] for k in keys if k["id"] == keyid.group(1))
    values = {"@method": "POST", "@authority": headers["host"], "@path": path}
    lines = [f'"{c}": {values[c] if c.startswith("@") else headers[c]}' for c in components]
    base = "\n".join([*lines, f'"@signature-params": {params}'])
    signature = base64.b64decode(headers["signature"].removeprefix(f"{name}=").strip(":"))
    public_key = serialization.load_pem_public_key(pem.encode())
    assert isinstance(public_key, ec.EllipticCurvePublicKey)
    try:
        public_key.verify(signature, base.encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def test_the_token_is_required_and_checked(fake: PawapayFake) -> None:
    missing = call(fake, "GET", "/v2/active-conf", token=None)
    assert missing.status_code == 401
    assert missing.json()["failureReason"]["failureCode"] == "NO_AUTHENTICATION"
    wrong = call(fake, "POST", "/v2/deposits", deposit_body(), token="nope")
    assert wrong.status_code == 403
    assert wrong.json()["failureReason"]["failureCode"] == "AUTHENTICATION_ERROR"
    assert fake.deposits == {}


def test_a_deposit_its_status_its_callback_and_a_duplicate(
    fake: PawapayFake, receiver: Receiver
) -> None:
    body = deposit_body(clientReferenceId="INV-1", customerMessage="Cauri order 1")
    body["metadata"] = [{"orderId": "ORD-1"}, {"customerId": "c@x.io", "isPII": True}]
    accepted = call(fake, "POST", "/v2/deposits", body)
    assert accepted.status_code == 200
    assert accepted.json()["status"] == "ACCEPTED"
    assert accepted.json()["nextStep"] == "FINAL_STATUS" and accepted.json()["created"]
    found = status(fake, "deposit", body["depositId"])
    assert found["status"] == "FOUND"
    data = found["data"]
    assert data["status"] == "COMPLETED" and data["providerTransactionId"]
    assert (data["amount"], data["currency"], data["country"]) == ("1000.00", "XOF", "BEN")
    assert data["payer"]["accountDetails"] == {"phoneNumber": BENIN_OK, "provider": "MTN_MOMO_BEN"}
    assert data["clientReferenceId"] == "INV-1"
    assert data["metadata"] == {"orderId": "ORD-1", "customerId": "c@x.io"}
    receiver.wait(1)
    path, headers, _ = receiver.calls[0]
    assert path == "/pawapay/deposit" and "signature" not in headers
    callback = receiver.bodies()[0]
    assert callback["depositId"] == body["depositId"] and callback["status"] == "COMPLETED"
    again = call(fake, "POST", "/v2/deposits", body)
    assert again.json() == {"depositId": body["depositId"], "status": "DUPLICATE_IGNORED"}
    assert len(fake.posts("deposit")) == 2 and len(fake.deposits) == 1
    assert status(fake, "deposit", str(uuid.uuid4())) == {"status": "NOT_FOUND"}


def _without(field: str) -> dict[str, Any]:
    body = deposit_body()
    del body[field]
    return body


@pytest.mark.parametrize(
    ("body", "http", "code"),
    [
        (deposit_body() | {"depositId": "not-a-uuid"}, 400, "INVALID_PARAMETER"),
        (
            deposit_body() | {"depositId": "0b8a6a8e-3b1f-11ef-9a0e-0242ac120002"},
            400,
            "INVALID_PARAMETER",
        ),  # a UUID, but v1
        (_without("amount"), 400, "MISSING_PARAMETER"),
        (deposit_body() | {"correspondent": "MTN_MOMO_BEN"}, 400, "UNSUPPORTED_PARAMETER"),
        (deposit_body() | {"amount": 1000}, 400, "INVALID_PARAMETER"),
        (deposit_body() | {"amount": "01000"}, 400, "INVALID_PARAMETER"),
        (deposit_body() | {"customerMessage": "no"}, 400, "INVALID_PARAMETER"),
        (deposit_body() | {"metadata": [{"a": "1"}, {"a": "2"}]}, 400, "DUPLICATE_METADATA_FIELD"),
        (deposit_body() | {"amount": "99"}, 200, "AMOUNT_OUT_OF_BOUNDS"),
        (deposit_body() | {"amount": "2000001"}, 200, "AMOUNT_OUT_OF_BOUNDS"),
        (deposit_body() | {"amount": "1000.50"}, 200, "INVALID_AMOUNT"),
        (deposit_body() | {"currency": "XAF"}, 200, "INVALID_CURRENCY"),
        (deposit_body(number="2295134578"), 200, "INVALID_PHONE_NUMBER"),
        (deposit_body(number="+22951345789"), 200, "INVALID_PHONE_NUMBER"),
        (deposit_body(number="242063456789"), 200, "INVALID_PHONE_NUMBER"),  # not Benin
        (deposit_body(provider="MTN_MOMO_XYZ"), 200, "INVALID_PROVIDER"),
    ],
)
def test_the_documented_rejections(
    fake: PawapayFake, body: dict[str, Any], http: int, code: str
) -> None:
    answer = call(fake, "POST", "/v2/deposits", body)
    assert answer.status_code == http
    assert answer.json()["status"] == "REJECTED"
    assert answer.json()["failureReason"]["failureCode"] == code
    assert answer.json()["failureReason"]["failureMessage"]
    assert fake.deposits == {}


def test_unparseable_json_is_invalid_input(fake: PawapayFake) -> None:
    answer = httpx.post(
        f"{fake.base_url}/v2/deposits",
        content=b"{not json",
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    assert answer.json()["failureReason"]["failureCode"] == "INVALID_INPUT"


def test_a_closed_provider_and_a_disabled_operation(fake: PawapayFake) -> None:
    fake.provider_status("MTN_MOMO_BEN", "DEPOSIT", "CLOSED")
    closed = deposit(fake)[1].json()
    assert closed["failureReason"]["failureCode"] == "PROVIDER_TEMPORARILY_UNAVAILABLE"
    fake.providers["MOOV_BEN"].operations = ("DEPOSIT",)
    refused = call(fake, "POST", "/v2/payouts", payout_body(provider="MOOV_BEN"))
    assert refused.status_code == 403
    assert refused.json()["failureReason"]["failureCode"] == "PAYOUTS_NOT_ALLOWED"


@pytest.mark.parametrize(
    ("kind", "number", "provider", "state", "code"),
    [
        ("deposit", "22951345029", "MTN_MOMO_BEN", "FAILED", "PAYER_NOT_FOUND"),
        ("deposit", "22951345039", "MTN_MOMO_BEN", "FAILED", "PAYMENT_NOT_APPROVED"),
        ("deposit", "22951345069", "MTN_MOMO_BEN", "FAILED", "UNSPECIFIED_FAILURE"),
        ("deposit", "22602345048", "MOOV_BFA", "FAILED", "INSUFFICIENT_BALANCE"),
        ("deposit", "2250503456789", "MTN_MOMO_CIV", "COMPLETED", None),
        ("deposit", "221763456049", "FREE_SEN", "FAILED", "INSUFFICIENT_BALANCE"),
        ("deposit", "242053456039", "AIRTEL_COG", "FAILED", "PAYMENT_NOT_APPROVED"),
        ("payout", "22951345089", "MTN_MOMO_BEN", "FAILED", "RECIPIENT_NOT_FOUND"),
        ("payout", "242053456119", "AIRTEL_COG", "FAILED", "UNSPECIFIED_FAILURE"),
        ("payout", "22602345678", "MOOV_BFA", "COMPLETED", None),
    ],
)
def test_the_sandbox_numbers(
    fake: PawapayFake,
    receiver: Receiver,
    kind: str,
    number: str,
    provider: str,
    state: str,
    code: str | None,
) -> None:
    body = deposit_body(number, provider) if kind == "deposit" else payout_body(number, provider)
    body["currency"] = "XAF" if provider.endswith("_COG") else "XOF"
    payment_id = body[f"{kind}Id"]
    assert call(fake, "POST", f"/v2/{kind}s", body).json()["status"] == "ACCEPTED"
    data = status(fake, kind, payment_id)["data"]
    assert data["status"] == state
    assert (data.get("failureReason") or {}).get("failureCode") == code
    receiver.wait(1)
    assert receiver.calls[0][0] == f"/pawapay/{kind}"
    assert receiver.bodies()[0]["status"] == state


def test_a_submitted_number_stays_in_flight_with_no_callback(
    fake: PawapayFake, receiver: Receiver
) -> None:
    payment_id, _ = deposit(fake, number="22951345129")
    assert status(fake, "deposit", payment_id)["data"]["status"] == "PROCESSING"
    time.sleep(0.2)
    assert receiver.calls == []
    resend = call(fake, "POST", f"/v2/deposits/resend-callback/{payment_id}").json()
    assert resend["status"] == "REJECTED"
    assert resend["failureReason"]["failureCode"] == "INVALID_STATE"


def test_an_outcome_held_then_settled(fake: PawapayFake, receiver: Receiver) -> None:
    fake.outcome_for("22951345111", "FAILED", "WALLET_LIMIT_REACHED")
    payment_id, _ = deposit(fake, number="22951345111")
    assert status(fake, "deposit", payment_id)["data"]["failureReason"]["failureCode"] == (
        "WALLET_LIMIT_REACHED"
    )
    fake.hold = True
    held, _ = deposit(fake)
    assert status(fake, "deposit", held)["data"]["status"] == "PROCESSING"
    fake.settle(held, "FAILED", "PAYMENT_NOT_APPROVED")
    receiver.wait(2)
    assert [b["status"] for b in receiver.bodies()] == ["FAILED", "FAILED"]


def test_orange_burkina_needs_a_preauthorisation_code(fake: PawapayFake) -> None:
    missing = deposit(fake, number="22607345678", provider="ORANGE_BFA")[1]
    assert missing.status_code == 400
    assert missing.json()["failureReason"]["failureCode"] == "MISSING_PARAMETER"
    fake.preauthorisation_code = "367025"
    wrong_id, wrong = deposit(
        fake, number="22607345678", provider="ORANGE_BFA", preAuthorisationCode="000000"
    )
    assert wrong.json()["status"] == "ACCEPTED"
    assert status(fake, "deposit", wrong_id)["data"]["status"] == "FAILED"
    right_id, _ = deposit(
        fake, number="22607345678", provider="ORANGE_BFA", preAuthorisationCode="367025"
    )
    assert status(fake, "deposit", right_id)["data"]["status"] == "COMPLETED"


def test_wave_redirects_the_customer(fake: PawapayFake, receiver: Receiver) -> None:
    payment_id, answer = deposit(
        fake,
        number="221773456789",
        provider="WAVE_SEN",
        successfulUrl="https://merchant.example/ok",
        failedUrl="https://merchant.example/ko",
    )
    assert answer.json()["nextStep"] == "GET_AUTH_URL"
    receiver.wait(2)
    processing, final = receiver.bodies()
    assert processing["status"] == "PROCESSING"
    assert processing["nextStep"] == "REDIRECT_TO_AUTH_URL" and processing["authorizationUrl"]
    assert final["status"] == "COMPLETED" and final["depositId"] == payment_id


def test_refunds_of_a_completed_deposit_only(fake: PawapayFake, receiver: Receiver) -> None:
    def refund(deposit_id: str, **extra: str) -> dict[str, Any]:
        body = {"refundId": str(uuid.uuid4()), "depositId": deposit_id} | extra
        answer: dict[str, Any] = call(fake, "POST", "/v2/refunds", body).json()
        return answer

    paid, _ = deposit(fake)
    failed, _ = deposit(fake, number="22951345039")
    partial = refund(paid, amount="300", currency="XOF")
    assert partial["status"] == "ACCEPTED"
    data = status(fake, "refund", partial["refundId"])["data"]
    assert (data["status"], data["amount"], data["depositId"]) == ("COMPLETED", "300.00", paid)
    assert data["recipient"]["accountDetails"]["phoneNumber"] == BENIN_OK
    too_large = refund(paid, amount="701", currency="XOF")
    assert too_large["failureReason"]["failureCode"] == "AMOUNT_TOO_LARGE"
    fake.hold = True
    rest = refund(paid)
    assert refund(paid)["failureReason"]["failureCode"] == "REFUND_IN_PROGRESS"
    fake.settle(rest["refundId"])
    assert status(fake, "refund", rest["refundId"])["data"]["amount"] == "700.00"
    assert refund(paid)["failureReason"]["failureCode"] == "DEPOSIT_ALREADY_REFUNDED"
    assert refund(failed)["failureReason"]["failureCode"] == "INVALID_STATE"
    assert refund(str(uuid.uuid4()))["failureReason"]["failureCode"] == "NOT_FOUND"
    receiver.wait(4)
    assert [p for p, _, _ in receiver.calls].count("/pawapay/refund") == 2


def test_a_delayed_provider_enqueues_payouts(fake: PawapayFake, receiver: Receiver) -> None:
    fake.provider_status("MTN_MOMO_BEN", "PAYOUT", "DELAYED")
    body = payout_body()
    assert call(fake, "POST", "/v2/payouts", body).json()["status"] == "ACCEPTED"
    assert status(fake, "payout", body["payoutId"])["data"]["status"] == "ENQUEUED"
    fake.settle(body["payoutId"])
    receiver.wait(1)
    assert receiver.bodies()[0]["payoutId"] == body["payoutId"]


@pytest.mark.parametrize(
    ("mode", "expected"), [("send", 1), ("drop", 0), ("duplicate", 2), ("delay", 1)]
)
def test_callback_modes(fake: PawapayFake, receiver: Receiver, mode: str, expected: int) -> None:
    fake.callback_mode, fake.callback_delay = mode, 0.3
    started = time.monotonic()
    payment_id, _ = deposit(fake)
    receiver.wait(expected)
    time.sleep(0.4)
    assert len(receiver.calls) == expected
    assert all(b["depositId"] == payment_id for b in receiver.bodies())
    if mode == "delay":
        assert time.monotonic() - started >= 0.3


def test_a_reordered_callback_comes_after_the_next_one(
    fake: PawapayFake, receiver: Receiver
) -> None:
    fake.callback_mode = "reorder"
    first, _ = deposit(fake)
    time.sleep(0.2)
    assert receiver.calls == []
    second, _ = deposit(fake)
    receiver.wait(2)
    assert [b["depositId"] for b in receiver.bodies()] == [second, first]


def test_a_refused_callback_is_retried(fake: PawapayFake, receiver: Receiver) -> None:
    receiver.answers = [500, 503]
    fake.callback_retry_first = 0.05
    deposit(fake)
    deadline = time.monotonic() + 5
    while len(fake.callbacks_attempted) < 3:
        assert time.monotonic() < deadline, fake.callbacks_attempted
        time.sleep(0.02)
    assert [a for *_, a in fake.callbacks_attempted] == [500, 503, 200]


def test_resending_a_callback(fake: PawapayFake, receiver: Receiver) -> None:
    payment_id, _ = deposit(fake)
    receiver.wait(1)
    resent = call(fake, "POST", f"/v2/deposits/resend-callback/{payment_id}").json()
    assert resent == {"depositId": payment_id, "status": "ACCEPTED"}
    receiver.wait(2)
    assert receiver.bodies()[0] == receiver.bodies()[1]
    unknown = str(uuid.uuid4())
    missing = call(fake, "POST", f"/v2/payouts/resend-callback/{unknown}").json()
    assert missing["failureReason"]["failureCode"] == "NOT_FOUND"
    assert fake.resend_requests == [("deposit", payment_id), ("payout", unknown)]


def test_signed_callbacks_verify_against_the_published_key(receiver: Receiver) -> None:
    with PawapayFake(api_token=TOKEN, signed_callbacks=True) as fake:
        fake.callback_urls = receiver.urls()  # set in the dashboard after the account exists
        conf = call(fake, "GET", "/v2/active-conf").json()
        assert conf["signatureConfiguration"] == {
            "signedRequestsOnly": False,
            "signedCallbacks": True,
        }
        keys = call(fake, "GET", "/v2/public-key/http").json()
        assert keys[0]["id"] == "HTTP_EC_P256_KEY:1"
        assert keys[0]["key"].startswith("-----BEGIN PUBLIC KEY-----")
        body = payout_body()
        call(fake, "POST", "/v2/payouts", body)
        receiver.wait(1)
        path, headers, raw = receiver.calls[0]
        assert headers["content-digest"].startswith("sha-512=:")
        assert headers["signature-date"] and headers["signature"].startswith("sig-pp=:")
        assert headers["signature-input"].startswith(
            'sig-pp=("@method" "@authority" "@path" "signature-date" "content-digest" '
            '"content-type");alg="ecdsa-p256-sha256";keyid="HTTP_EC_P256_KEY:1";created='
        )
        assert verify(fake, path, headers, raw)
        assert not verify(fake, path, headers, raw.replace(b"COMPLETED", b"FAILED"))
        forged = {"payoutId": body["payoutId"], "status": "FAILED"}
        assert fake.send_forged_callback("payout", forged, signed_with_wrong_key=True) == 200
        assert fake.send_forged_callback("payout", forged, unsigned=True) == 200
        receiver.wait(3)
        assert not verify(fake, *receiver.calls[1])
        assert "signature" not in receiver.calls[2][1]


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
def test_faults(fake: PawapayFake, fault: str, recorded: bool) -> None:
    fake.fault(fault, path="/v2/deposits")
    body = deposit_body()
    try:
        answer = call(fake, "POST", "/v2/deposits", body, timeout=0.5)
        assert answer.status_code == 500
        assert answer.json() == {
            "failureReason": {
                "failureCode": "UNKNOWN_ERROR",
                "failureMessage": answer.json()["failureReason"]["failureMessage"],
            }
        }
    except httpx.HTTPError:
        assert fault not in ("error_500", "error_500_after_accept")
    assert (body["depositId"] in fake.deposits) is recorded
    expected = {"status": "FOUND"} if recorded else {"status": "NOT_FOUND"}
    assert status(fake, "deposit", body["depositId"]).items() >= expected.items()


def test_active_configuration_and_availability(fake: PawapayFake, receiver: Receiver) -> None:
    conf = call(fake, "GET", "/v2/active-conf").json()
    codes = {p["provider"]: c["country"] for c in conf["countries"] for p in c["providers"]}
    assert set(codes.values()) == {"BEN", "BFA", "CIV", "SEN", "COG"}
    benin = call(fake, "GET", "/v2/active-conf?country=BEN&operationType=DEPOSIT").json()
    [country] = benin["countries"]
    assert (country["country"], country["prefix"]) == ("BEN", "229")
    mtn = next(p for p in country["providers"] if p["provider"] == "MTN_MOMO_BEN")
    [currency] = mtn["currencies"]
    assert currency["currency"] == "XOF"
    assert list(currency["operationTypes"]) == ["DEPOSIT"]
    conf_deposit = currency["operationTypes"]["DEPOSIT"]
    assert conf_deposit["authType"] == "PROVIDER_AUTH"
    assert (conf_deposit["minAmount"], conf_deposit["maxAmount"]) == ("100", "2000000")
    assert conf_deposit["decimalsInAmount"] == "NONE" and conf_deposit["status"] == "OPERATIONAL"
    assert conf_deposit["callbackUrl"] == receiver.urls()["deposit"]
    burkina = call(fake, "GET", "/v2/active-conf?country=BFA").json()["countries"][0]
    orange = next(p for p in burkina["providers"] if p["provider"] == "ORANGE_BFA")
    assert orange["currencies"][0]["operationTypes"]["DEPOSIT"]["authType"] == "PREAUTH"
    fake.provider_status("MTN_MOMO_BEN", "PAYOUT", "DELAYED")
    available = call(fake, "GET", "/v2/availability?country=BEN&operationType=PAYOUT").json()
    assert available == [
        {
            "country": "BEN",
            "providers": [
                {"provider": "MTN_MOMO_BEN", "operationTypes": {"PAYOUT": "DELAYED"}},
                {"provider": "MOOV_BEN", "operationTypes": {"PAYOUT": "OPERATIONAL"}},
            ],
        }
    ]


def test_mali_and_togo_only_when_asked_for() -> None:
    with PawapayFake(api_token=TOKEN, providers=UNVERIFIED_PROVIDERS) as fake:
        conf = call(fake, "GET", "/v2/active-conf").json()
        assert {c["country"] for c in conf["countries"]} == {"MLI", "TGO"}


@pytest.mark.parametrize(
    ("typed", "country", "provider", "msisdn"),
    [
        ("+229 51 34 57 89", "BEN", "MTN_MOMO_BEN", "22951345789"),
        ("22995345789", "BEN", "MOOV_BEN", "22995345789"),
        ("226 07-34-56-78", "BFA", "ORANGE_BFA", "22607345678"),
        ("+225 05 03 45 67 89", "CIV", "MTN_MOMO_CIV", "2250503456789"),
        ("2250734567890", "CIV", "ORANGE_CIV", "2250734567890"),
        ("221 0773456789", "SEN", "ORANGE_SEN", "221773456789"),
        ("242 06 345 6789", "COG", "MTN_MOMO_COG", "242063456789"),
    ],
)
def test_predict_provider(
    fake: PawapayFake, typed: str, country: str, provider: str, msisdn: str
) -> None:
    answer = call(fake, "POST", "/v2/predict-provider", {"phoneNumber": typed})
    assert answer.json() == {"country": country, "provider": provider, "phoneNumber": msisdn}


def test_predict_provider_refuses_a_number_it_cannot_place(fake: PawapayFake) -> None:
    for typed in ("12345", "2295134578", "+33 6 12 34 56 78"):
        answer = call(fake, "POST", "/v2/predict-provider", {"phoneNumber": typed})
        assert answer.status_code == 400
        assert answer.json()["failureReason"]["failureCode"] == "INVALID_PHONE_NUMBER"
