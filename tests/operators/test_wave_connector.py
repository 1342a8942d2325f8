"""The Wave connector's pure parts: its webhook authentication and what Wave's objects mean."""

from __future__ import annotations

import hashlib
import hmac
import time
from decimal import Decimal

from cauri.operators.protocol import Outcome
from cauri.operators.wave import answers, signature

SECRET = "wave_sn_WHS_the-webhook-secret"
BODY = b'{"id": "EV_1", "type": "checkout.session.completed", "data": {}}'


def signed(body: bytes, stamp: int, *secrets: str) -> str:
    digests = (
        hmac.new(s.encode(), str(stamp).encode() + body, hashlib.sha256).hexdigest()
        for s in secrets
    )
    return ",".join([f"t={stamp}", *(f"v1={d}" for d in digests)])


def test_a_signature_by_any_of_the_secrets_is_accepted_within_the_tolerance() -> None:
    now = time.time()
    stamp = int(now)
    assert signature.valid(signed(BODY, stamp, SECRET), BODY, SECRET, now)
    # During a rotation Wave signs with the old and the new secret.
    assert signature.valid(signed(BODY, stamp, "old-secret", SECRET), BODY, SECRET, now)
    assert not signature.valid(signed(BODY, stamp, "another"), BODY, SECRET, now)
    assert not signature.valid(signed(BODY + b" ", stamp, SECRET), BODY, SECRET, now)
    late = now + signature.TOLERANCE_SECONDS + 1
    assert not signature.valid(signed(BODY, stamp, SECRET), BODY, SECRET, late)
    for header in (None, "", "v1=abc", f"t={stamp}", "t=soon,v1=abc"):
        assert not signature.valid(header, BODY, SECRET, now)


def test_a_signature_of_any_characters_is_refused_never_an_error() -> None:
    """Headers arrive as Latin-1 text: a forger's accents and other digits are refused."""
    now = time.time()
    stamp = int(now)
    for header in (f"t={stamp},v1=é", f"t={stamp},v1=" + "é" * 64, "t=²,v1=abc"):
        assert not signature.valid(header, BODY, SECRET, now)
        assert not signature.authentic({"wave-signature": header}, BODY, SECRET, now)


def test_a_shared_secret_webhook_is_authentic_by_its_bearer_token() -> None:
    now = time.time()
    assert signature.authentic({"authorization": f"Bearer {SECRET}"}, BODY, SECRET, now)
    assert not signature.authentic({"authorization": "Bearer guess"}, BODY, SECRET, now)
    assert not signature.authentic({}, BODY, SECRET, now)


def test_what_a_checkout_session_says() -> None:
    launch = "https://pay.wave.com/c/cos-1"
    open_ = {"id": "cos-1", "checkout_status": "open", "payment_status": "processing"}
    pending = answers.to_session(open_ | {"wave_launch_url": launch}, ())
    assert (pending.outcome, pending.redirect_url) == (Outcome.PENDING, launch)
    failed_attempt = open_ | {"last_payment_error": {"code": "insufficient-funds"}}
    assert answers.to_session(failed_attempt, ()).outcome is Outcome.PENDING
    paid = {"checkout_status": "complete", "payment_status": "succeeded", "transaction_id": "T1"}
    assert answers.to_session(paid, ()).outcome is Outcome.SUCCEEDED
    assert answers.to_session(paid, ()).operator_reference == "T1"
    expired = answers.to_session(failed_attempt | {"checkout_status": "expired"}, ())
    assert (expired.outcome, expired.reason) == (
        Outcome.FAILED,
        "session_expired:insufficient_funds",
    )
    assert answers.to_session({"checkout_status": "archived"}, ()).unknown


def test_what_a_payout_says() -> None:
    assert answers.to_payout({"id": "pt-1", "status": "succeeded"}, ()).outcome is Outcome.SUCCEEDED
    assert answers.to_payout({"id": "pt-1", "status": "processing"}, ()).outcome is (
        Outcome.PENDING
    )
    failed = answers.to_payout(
        {"status": "failed", "payout_error": {"error_code": "recipient-limit-exceeded"}}, ()
    )
    assert (failed.outcome, failed.reason) == (Outcome.FAILED, "recipient_limit_exceeded")
    assert answers.to_payout({"status": "reversed"}, ()).reason == "payout_reversed"
    assert answers.to_payout({}, ()).unknown


def test_what_a_session_and_a_payout_say_they_were() -> None:
    """Their amount and currency, and the kind, for the call protocol to check against the
    recorded request."""
    paid = {"payment_status": "succeeded", "amount": "1000", "currency": "XOF"}
    session = answers.to_session(paid, ())
    assert (session.kind, session.amount, session.currency) == ("collect", Decimal(1000), "XOF")
    sent = {"status": "succeeded", "receive_amount": "950", "currency": "XOF", "amount": "x"}
    payout = answers.to_payout(sent, ())
    assert (payout.kind, payout.amount, payout.currency) == ("disburse", Decimal(950), "XOF")
    unread = answers.to_payout({"status": "failed", "receive_amount": 9.5}, ())
    assert (unread.amount, unread.currency) == (None, None)


def test_which_http_answers_refuse_a_request() -> None:
    for status in (400, 401, 403, 404, 422):
        assert answers.is_refusal(status)
    # 409: a key in use or reused; 408, 429, 5xx, no answer: nothing is known.
    for unknown in (408, 409, 429, 500, 503, None):
        assert not answers.is_refusal(unknown)
    refused = answers.refused(401, {"code": "api-key-revoked"}, ())
    assert refused.reason == "operator_refused_credentials:api_key_revoked"
