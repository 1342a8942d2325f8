"""The pawaPay connector against pawaPay's contract fake, and its pure parts: what each of
pawaPay's answers means, how a callback's signature is verified, what is sent."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from types import SimpleNamespace

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms

from cauri.operators.config import ConnectorConfig
from cauri.operators.pawapay import answers, providers, signatures
from cauri.operators.pawapay.connector import (
    KEY_FETCH_INTERVAL,
    PawapayConnector,
    customer_message,
)
from cauri.operators.protocol import Collection, Notice, Outcome
from tests.fakes.pawapay import KEY_ID, PawapayFake

TOKEN = "pawapay-token"
URL = "https://pay.example.com/api/v1/operator-callbacks/pawapay"


@pytest.fixture
def fake() -> Iterator[PawapayFake]:
    with PawapayFake(api_token=TOKEN, signed_callbacks=True) as fake:
        fake.callback_mode = "drop"
        yield fake


@pytest.fixture
async def pawapay(fake: PawapayFake) -> AsyncIterator[PawapayConnector]:
    connector = PawapayConnector(
        ConnectorConfig(
            name="pawapay",
            kind="pawapay",
            environment="sandbox",
            base_url=fake.base_url,
            settings={"signed_callbacks": "true"},
            secrets={"api_token": TOKEN},
            timeout=0.5,
            connect_timeout=0.5,
        )
    )
    yield connector
    await connector.aclose()


def collection(operator: str, number: str, otp: str | None = None) -> Collection:
    return Collection(str(uuid.uuid4()), operator, 1000, "XOF", number, otp, "Commande #42 !")


async def test_an_otp_goes_only_to_providers_that_authorise_by_a_code(
    fake: PawapayFake, pawapay: PawapayConnector
) -> None:
    """ORANGE_BFA is PREAUTH in the account's configuration; ORANGE_SEN prompts for a PIN,
    and pawaPay refuses a code it does not take."""
    preauth = await pawapay.collect(collection("orange_bf", "22605123456", otp="111222"))
    prompt = await pawapay.collect(collection("orange_sn", "221771234567", otp="111222"))
    assert preauth.outcome is prompt.outcome is Outcome.PENDING
    bodies = [request.body for request in fake.posts("deposit")]
    assert bodies[0]["preAuthorisationCode"] == "111222"
    assert "preAuthorisationCode" not in bodies[1]
    assert bodies[0]["customerMessage"] == "Commande 42"


async def test_an_operator_without_a_provider_is_not_sent(
    fake: PawapayFake, pawapay: PawapayConnector
) -> None:
    result = await pawapay.collect(collection("togocom_tg", "22890123456"))
    assert (result.outcome, result.reason) == (Outcome.FAILED, "operator_not_carried:togocom_tg")
    assert fake.posts("deposit") == []


async def test_a_signed_callback_verifies_and_a_tampered_one_does_not(
    fake: PawapayFake, pawapay: PawapayConnector
) -> None:
    reference = str(uuid.uuid4())
    body = json.dumps({"depositId": reference, "status": "COMPLETED"}).encode()
    headers = httpx.Headers(fake.signature_headers(URL, body))
    update = await pawapay.parse_callback(Notice("POST", URL, headers, body))
    assert update is not None and update.verified and update.reference == reference
    assert update.result.outcome is Outcome.SUCCEEDED
    tampered = body.replace(b"COMPLETED", b"FAILED")
    assert await pawapay.parse_callback(Notice("POST", URL, headers, tampered)) is None
    elsewhere = "https://attacker.example/api/v1/operator-callbacks/pawapay"
    assert await pawapay.parse_callback(Notice("POST", elsewhere, headers, body)) is None
    assert await pawapay.parse_callback(Notice("POST", URL, {}, body)) is None


def test_rfc_9421_signatures_are_read_as_well_as_pawapays_der_ones() -> None:
    """A signer that follows RFC 9421 to the letter (r and s side by side) verifies too."""
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    body = b'{"payoutId": "x", "status": "COMPLETED"}'
    message = SimpleNamespace(method="POST", url=URL, headers={"Content-Type": "application/json"})
    signer = HTTPMessageSigner(
        signature_algorithm=algorithms.ECDSA_P256_SHA256,
        key_resolver=MappingKeyResolver(public_keys={}, private_keys={"k1": key}),
    )
    signer.sign(
        message,
        key_id="k1",
        covered_component_ids=("@method", "@authority", "@path", "content-digest"),
        label="sig-pp",
        include_alg=True,
        body=body,
    )
    notice = Notice("POST", URL, httpx.Headers(message.headers), body)
    signed = signatures.signature_input(notice)
    assert signed is not None and signed.keyid == "k1"
    assert signatures.verified(notice, {"k1": pem.decode()}, signed)
    assert not signatures.verified(notice, {}, signed)


def test_what_pawapays_answers_mean() -> None:
    accepted = answers.to_initiation(200, '{"status": "ACCEPTED"}', "ref", ())
    duplicate = answers.to_initiation(200, '{"status": "DUPLICATE_IGNORED"}', "ref", ())
    assert accepted.outcome is duplicate.outcome is Outcome.PENDING
    assert not accepted.unknown and not duplicate.unknown
    rejected = answers.to_initiation(
        200,
        '{"status": "REJECTED", "failureReason": {"failureCode": "AMOUNT_OUT_OF_BOUNDS"}}',
        "ref",
        (),
    )
    assert (rejected.outcome, rejected.reason) == (Outcome.FAILED, "amount_out_of_bounds")
    refused = answers.to_initiation(403, '{"status": "REJECTED"}', "ref", ())
    assert refused.reason == "operator_refused_credentials:http_403"
    for status, text in ((500, "{}"), (429, ""), (None, None), (200, "not json")):
        assert answers.to_initiation(status, text, "ref", ()).unknown
    assert answers.to_status(200, '{"status": "NOT_FOUND"}', ()).unknown_reference
    found = '{"status": "FOUND", "data": {"status": "%s", "providerTransactionId": "p1"}}'
    assert answers.to_status(200, found % "COMPLETED", ()).outcome is Outcome.SUCCEEDED
    assert answers.to_status(200, found % "IN_RECONCILIATION", ()).outcome is Outcome.PENDING
    assert answers.to_status(200, found % "ENQUEUED", ()).outcome is Outcome.PENDING
    assert answers.to_status(200, found % "SOMETHING_NEW", ()).unknown
    assert answers.to_status(502, found % "COMPLETED", ()).unknown


def test_the_providers_setting_and_customer_messages() -> None:
    assert providers.table("moov_tg=moov_tgo, togocom_tg=TOGOCOM_TGO")["moov_tg"] == "MOOV_TGO"
    assert providers.table(None) == dict(providers.PROVIDERS)
    with pytest.raises(ValueError, match="providers"):
        providers.table("moov_tg")
    assert customer_message("Facture n°12 — mai") == "Facture n 12 mai"
    assert customer_message("ok") is None
    assert customer_message("x" * 40) == "x" * 22


async def test_the_public_keys_are_fetched_once(
    fake: PawapayFake, pawapay: PawapayConnector
) -> None:
    for _ in range(3):
        body = json.dumps({"depositId": str(uuid.uuid4()), "status": "FAILED"}).encode()
        update = await pawapay.parse_callback(
            Notice("POST", URL, httpx.Headers(fake.signature_headers(URL, body)), body)
        )
        assert update is not None and update.verified
    fetched = [r for r in fake.requests if r.path == "/v2/public-key/http"]
    assert len(fetched) == 1 and KEY_ID


async def test_key_ids_pawapay_never_published_fetch_the_keys_once_a_minute(
    fake: PawapayFake, pawapay: PawapayConnector
) -> None:
    """Forged callbacks naming made-up key ids, one after another: one fetch, then another
    only once KEY_FETCH_INTERVAL has passed; pawaPay's own key is still read."""
    moment = [1000.0]
    pawapay._clock = lambda: moment[0]  # the connector's clock, moved by hand
    forger = ec.generate_private_key(ec.SECP256R1())

    def forged(keyid: str) -> Notice:
        body = json.dumps({"depositId": str(uuid.uuid4()), "status": "COMPLETED"}).encode()
        headers = fake.signature_headers(URL, body, key=forger)
        headers["Signature-Input"] = headers["Signature-Input"].replace(KEY_ID, keyid)
        return Notice("POST", URL, httpx.Headers(headers), body)

    def fetches() -> int:
        return len([r for r in fake.requests if r.path == "/v2/public-key/http"])

    for number in range(20):
        assert await pawapay.parse_callback(forged(f"made-up-{number}")) is None
    assert fetches() == 1
    moment[0] += KEY_FETCH_INTERVAL
    assert await pawapay.parse_callback(forged("made-up-again")) is None
    assert await pawapay.parse_callback(forged("made-up-again")) is None
    assert fetches() == 2
    body = json.dumps({"depositId": str(uuid.uuid4()), "status": "COMPLETED"}).encode()
    genuine = Notice("POST", URL, httpx.Headers(fake.signature_headers(URL, body)), body)
    update = await pawapay.parse_callback(genuine)
    assert update is not None and update.verified and fetches() == 2


def test_pawapays_answers_say_what_the_payment_is() -> None:
    """Its kind (by its id field: a refund's names its deposit too), amount and currency,
    for the call protocol to check against the recorded request."""
    refund = {"refundId": "r", "depositId": "d", "status": "COMPLETED", "amount": "15.50"}
    result = answers.to_payment(refund | {"currency": "XOF"}, ())
    assert (result.kind, result.amount, result.currency) == ("refund", Decimal("15.50"), "XOF")
    found = '{"status": "FOUND", "data": {"payoutId": "p", "status": "FAILED", "amount": "x"}}'
    payout = answers.to_status(200, found, ())
    assert (payout.kind, payout.amount, payout.currency) == ("disburse", None, None)
    assert payout.outcome is Outcome.FAILED
    deposit = answers.to_payment({"depositId": "d", "status": "ENQUEUED", "amount": 1.5}, ())
    assert (deposit.kind, deposit.amount) == ("collect", None)
