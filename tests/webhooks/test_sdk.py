"""The merchant SDK's `verify` (spec: Signature verification), and its agreement with
Stripe's verifier, which uses the same t/v1 scheme."""

from __future__ import annotations

import json

import pytest
import stripe

from cauri.client import webhooks as sdk

SECRET = "whsec_" + "s" * 32
BODY = json.dumps({"id": "e1", "event": "webhook.test", "data": {"message": "é"}}).encode()
NOW = 1_800_000_000


def header(body: bytes = BODY, secret: str = SECRET, t: int = NOW) -> str:
    return sdk.signature_header(body, secret, t)


def test_valid_signature_returns_the_event() -> None:
    assert sdk.verify(BODY, header(), SECRET, now=NOW) == json.loads(BODY)
    assert sdk.verify(BODY.decode(), header(), SECRET, now=NOW) == json.loads(BODY)


def test_tolerance_both_ways() -> None:
    assert sdk.verify(BODY, header(), SECRET, now=NOW + 300)
    assert sdk.verify(BODY, header(), SECRET, now=NOW - 300)
    with pytest.raises(sdk.StaleTimestamp):
        sdk.verify(BODY, header(), SECRET, now=NOW + 301)
    with pytest.raises(sdk.StaleTimestamp):
        sdk.verify(BODY, header(), SECRET, now=NOW - 301)
    assert sdk.verify(BODY, header(), SECRET, tolerance=3600, now=NOW + 3000)


@pytest.mark.parametrize(
    ("body", "signed_with", "verified_with"),
    [
        (BODY + b" ", SECRET, SECRET),  # body changed after signing
        (BODY, SECRET, "whsec_other"),  # another environment's secret
    ],
)
def test_invalid_signature(body: bytes, signed_with: str, verified_with: str) -> None:
    with pytest.raises(sdk.InvalidSignature):
        sdk.verify(body, header(BODY, signed_with), verified_with, now=NOW)


def test_a_timestamp_cannot_be_changed() -> None:
    forged = header().replace(f"t={NOW}", f"t={NOW + 10}")
    with pytest.raises(sdk.InvalidSignature):
        sdk.verify(BODY, forged, SECRET, now=NOW)


def test_any_matching_v1_is_accepted_and_other_schemes_ignored() -> None:
    good = header().split(",")[1]
    assert sdk.verify(BODY, f"t={NOW},v0=abc,v1={'0' * 64},{good}", SECRET, now=NOW)


@pytest.mark.parametrize(
    "malformed",
    ["", "garbage", f"t={NOW}", "v1=abc", f"t=soon,v1={'0' * 64}", f"t={NOW};v1=abc"],
)
def test_malformed_headers(malformed: str) -> None:
    with pytest.raises(sdk.MalformedHeader):
        sdk.verify(BODY, malformed, SECRET, now=NOW)


def test_errors_share_one_base_class() -> None:
    for error in (sdk.InvalidSignature, sdk.StaleTimestamp, sdk.MalformedHeader):
        assert issubclass(error, sdk.WebhookVerificationError)


def test_signed_non_json_is_rejected() -> None:
    for body in (b"not json", b"[1, 2]"):
        with pytest.raises(sdk.MalformedPayload):
            sdk.verify(body, header(body), SECRET, now=NOW)


def test_stripe_verifier_agrees() -> None:
    import time

    t = int(time.time())
    signed = header(t=t)
    assert stripe.WebhookSignature.verify_header(BODY.decode(), signed, SECRET, tolerance=300)
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.WebhookSignature.verify_header(BODY.decode(), signed, "whsec_other", tolerance=300)
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.WebhookSignature.verify_header(
            BODY.decode(), header(t=t - 600), SECRET, tolerance=300
        )
