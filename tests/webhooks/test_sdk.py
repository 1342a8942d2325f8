"""The client package's `verify` (spec: Signature verification) on what the server's
signature makes, and its agreement with Stripe's verifier, which uses the same t/v1 scheme."""

from __future__ import annotations

import json

import pytest
import stripe
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cauri.webhooks.signature import compute_signature, signature_header
from cauri_client import Event
from cauri_client import webhooks as sdk

SECRET = "whsec_" + "s" * 32
BODY = json.dumps({"id": "e1", "event": "webhook.test", "data": {"message": "é"}}).encode()
NOW = 1_800_000_000
EVENT = Event.from_json(json.loads(BODY))


def header(body: bytes = BODY, secret: str = SECRET, t: int = NOW) -> str:
    return signature_header(body, secret, t)


def test_valid_signature_returns_the_event() -> None:
    assert sdk.verify(BODY, header(), SECRET, now=NOW) == EVENT
    assert sdk.verify(BODY.decode(), header(), SECRET, now=NOW) == EVENT


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


GOOD_V1 = compute_signature(BODY, SECRET, NOW)


@pytest.mark.parametrize(
    "malformed",
    [
        None,
        b"",
        header().encode(),  # bytes: the caller must pass the header's text
        bytearray(header().encode()),
        123,
        1.5,
        ["t=1", "v1=x"],
        {"t": NOW},
        object(),
        f"t={NOW},v1={GOOD_V1}é",  # non-ASCII
        f"t=１８００００００００,v1={GOOD_V1}",  # fullwidth digits
        f"t=١٨٠٠٠٠٠٠٠٠,v1={GOOD_V1}",  # Arabic-Indic digits
        f"t=1_800_000_000,v1={GOOD_V1}",  # underscores, which int() accepts
        f"t=-{NOW},v1={GOOD_V1}",
        f"t=+{NOW},v1={GOOD_V1}",
        f"t= {NOW},v1={GOOD_V1}",
        f"t={'9' * 5000},v1={GOOD_V1}",  # huge t: int() refuses it, or overflows a float
        f"t={'9' * 400},v1={GOOD_V1}",
        f"t={NOW}.5,v1={GOOD_V1}",
        f"t=,v1={GOOD_V1}",
        f"t={NOW},v1=",  # empty v1
        f"t={NOW},v1={'z' * 64}",  # not hex
        f"t={NOW},v1=é{GOOD_V1[1:]}",
        f"t={NOW},v1={GOOD_V1[:-1]}",  # too short
        f"t={NOW},v1={GOOD_V1.upper()}",
        f"t={NOW},t={NOW},v1={GOOD_V1}",  # repeated t
        f"t={NOW},v1={GOOD_V1},",  # trailing comma
        f"t={NOW},v1={GOOD_V1}," + "v1=" + "0" * 64 * 100,  # absurdly long
        "\x00",
        ",",
        "=",
    ],
)
def test_any_malformed_header_raises_a_verification_error(malformed: object) -> None:
    with pytest.raises(sdk.MalformedHeader):
        sdk.verify(BODY, malformed, SECRET, now=NOW)  # type: ignore[arg-type]


_HEADER_PARTS = st.one_of(
    st.sampled_from(["t", "v1", "v0", "T", " t", ""]),
    st.text(max_size=8),
).flatmap(
    lambda key: st.one_of(
        st.just(f"{key}={NOW}"),
        st.just(f"{key}={GOOD_V1}"),
        st.builds(lambda value: f"{key}={value}", st.text(max_size=80)),
        st.builds(lambda value: f"{key}={value}", st.integers().map(str)),
        st.just(key),
    )
)
ANY_HEADER = st.one_of(
    st.none(),
    st.text(),
    st.binary(),
    st.integers(),
    st.floats(),
    st.lists(st.text(max_size=5), max_size=3),
    st.lists(_HEADER_PARTS, min_size=1, max_size=5).map(",".join),
)


@given(malformed=ANY_HEADER)
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_verify_returns_the_event_or_raises_its_own_error_for_any_header(
    malformed: object,
) -> None:
    try:
        event = sdk.verify(BODY, malformed, SECRET, now=NOW)  # type: ignore[arg-type]
    except sdk.WebhookVerificationError:
        return
    assert event == EVENT


@given(body=st.one_of(st.binary(), st.text()))
@settings(max_examples=500, deadline=None)
def test_verify_returns_the_event_or_raises_its_own_error_for_any_body(body: bytes | str) -> None:
    raw = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    try:
        event = sdk.verify(body, header(raw), SECRET, now=NOW)
    except sdk.WebhookVerificationError:
        return
    assert event == Event.from_json(json.loads(raw))


def test_a_body_decoded_with_surrogateescape_gives_back_its_bytes() -> None:
    raw = b"\xff not utf-8"
    # The signature matches the bytes received; only then is the body found not to be JSON.
    with pytest.raises(sdk.MalformedPayload):
        sdk.verify(raw.decode("utf-8", "surrogateescape"), header(raw), SECRET, now=NOW)


@pytest.mark.parametrize("body", [None, 12, {"id": "e1"}, json.loads(BODY)])
def test_a_body_that_is_not_the_raw_bytes_is_the_callers_bug(body: object) -> None:
    with pytest.raises(TypeError, match="raw_body"):
        sdk.verify(body, header(), SECRET, now=NOW)  # type: ignore[arg-type]


@pytest.mark.parametrize("secret", [None, SECRET.encode(), 42])
def test_a_secret_that_is_not_a_str_is_the_callers_bug(secret: object) -> None:
    with pytest.raises(TypeError, match="secret"):
        sdk.verify(BODY, header(), secret, now=NOW)  # type: ignore[arg-type]


def test_an_empty_secret_is_refused_rather_than_trusted() -> None:
    forged = signature_header(BODY, "", NOW)
    with pytest.raises(ValueError, match="secret"):
        sdk.verify(BODY, forged, "", now=NOW)


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
