"""Issue 8, keys and secrets: nothing secret or personal in the logs. A real `cauri serve`
(JSON lines, then console) runs a full scenario: payments with phone numbers, a card payment
with a customer, a webhook endpoint and a secret rotation, deliveries (a failed one
retried), refused inputs, a request that crashes on a failing SQL statement and a job that
does. Its whole output is then searched for every key, secret, password, phone number, name
and email used: none may appear."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from cauri.kit import redaction
from cauri.runtime import Runtime
from tests.conftest import TEST_SECRET_KEY
from tests.foundation.builders import API
from tests.support import (
    MerchantKeys,
    card_body,
    free_port,
    make_merchant,
    momo_body,
    scalar,
    webhook_secrets_in_clear,
)
from tests.webhooks.receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]
CAURI = Path(sys.executable).parent / "cauri"
STARTUP = 60  # a `cauri` process takes ~10 s to start on a loaded two-core machine

PHONE = "22997314159"  # succeeds after the settle delay: a webhook
PHONE_REFUSED = "22997260001"  # refused by the simulator (402)
PHONE_PLUS = "22997271828"  # sent with a leading +
PHONE_CRASH = "22997577215"  # the insert fails: a crash of the request
PHONE_JOB_CRASH = "22997466920"  # the settlement's update fails: a crash of the job
CUSTOMER = {
    "firstname": "Ndeyefatou",
    "lastname": "Kouyatessa",
    "email": "ndeyefatou.kouyatessa@exemple.sn",
}

# A failing statement whose error carries the row (as PostgreSQL's NOT NULL and CHECK
# violations do: "DETAIL: Failing row contains (...)").
FAILING_SQL = (
    f"""
CREATE FUNCTION log_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.phone_number = '{PHONE_CRASH}'
     OR (TG_OP = 'UPDATE' AND NEW.phone_number = '{PHONE_JOB_CRASH}') THEN
    RAISE EXCEPTION 'refused by the log test'
      USING DETAIL = 'Failing row contains ' || NEW::text;
  END IF;
  RETURN NEW;
END $$
""",
    """
CREATE TRIGGER log_test_refuse BEFORE INSERT OR UPDATE ON payments
  FOR EACH ROW EXECUTE FUNCTION log_test_refuse()
""",
)


@pytest.fixture
async def failing_sql(runtime: Runtime) -> AsyncIterator[None]:
    async with runtime.engine.begin() as connection:
        for statement in FAILING_SQL:
            await connection.execute(text(statement))
    try:
        yield
    finally:
        async with runtime.engine.begin() as connection:
            await connection.execute(text("DROP TRIGGER log_test_refuse ON payments"))
            await connection.execute(text("DROP FUNCTION log_test_refuse()"))


def with_password(database_url: str) -> tuple[str, str]:
    """The URL with a password in it (a trusting server ignores it), and that password."""
    url = make_url(database_url.replace("postgresql+asyncpg://", "postgresql://", 1))
    password = url.password or "pw-Q7tLx9ZmR3"
    return url.set(password=str(password)).render_as_string(hide_password=False), str(password)


class Server:
    def __init__(self, database_url: str, log: Path, json_lines: bool) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAURI_")} | {
            "CAURI_DATABASE_URL": database_url,
            "CAURI_LOG_JSON": "1" if json_lines else "0",
            "CAURI_WEBHOOK_ALLOW_PRIVATE": "1",
            "CAURI_SECRET_KEY": TEST_SECRET_KEY,  # the webhook secrets are sealed with it
            "CAURI_TEST_SETTLE_DELAY": "1",
            "CAURI_WEBHOOK_RETRY_DELAYS": "1,1,1",
            "CAURI_WORKER_POLL_INTERVAL": "0.2",
            "CAURI_RATE_LIMIT": "100000/minute",
        }
        self.log = log
        with log.open("ab") as output:
            self.process = subprocess.Popen(
                [str(CAURI), "serve", "--port", str(self.port)],
                cwd=ROOT,
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
            )

    async def wait_until_up(self) -> None:
        deadline = time.monotonic() + STARTUP
        async with httpx.AsyncClient(base_url=self.base_url) as client:
            while True:
                assert self.process.poll() is None, logged(self.log)
                try:
                    await client.get(f"{API}/payment-modes")
                    return
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.3)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def logged(log: Path) -> str:
    return log.read_text(errors="replace")


async def wait_for_line(log: Path, needle: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while needle not in logged(log):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{needle!r} never logged:\n{logged(log)}")
        await asyncio.sleep(0.2)


async def scenario(
    client: httpx.AsyncClient, merchant: MerchantKeys, receiver: Receiver
) -> list[str]:
    """Runs every kind of request; returns the secrets the service handed out on the way."""
    headers = merchant.headers()
    receiver.answer(500)  # the first delivery fails and is retried

    endpoint = await client.put(
        f"{API}/webhooks/endpoint", json={"url": receiver.url}, headers=headers
    )
    assert endpoint.status_code == 200, endpoint.text
    rotated = await client.put(
        f"{API}/webhooks/endpoint", json={"rotate_secret": True}, headers=headers
    )
    assert rotated.status_code == 200, rotated.text
    secrets = [endpoint.json()["data"]["secret"], rotated.json()["data"]["secret"]]

    made = [
        await client.post(
            f"{API}/payments",
            json=momo_body(phone_number=PHONE, customer=CUSTOMER),
            headers=headers,
        ),
        await client.post(
            f"{API}/payments", json=momo_body(phone_number="+" + PHONE_PLUS), headers=headers
        ),
        await client.post(
            f"{API}/payments", json=momo_body(phone_number=PHONE_JOB_CRASH), headers=headers
        ),
        await client.post(f"{API}/payments", json=card_body(customer=CUSTOMER), headers=headers),
    ]
    assert [response.status_code for response in made] == [201] * 4, [r.text for r in made]
    refused = await client.post(
        f"{API}/payments", json=momo_body(phone_number=PHONE_REFUSED), headers=headers
    )
    assert refused.status_code == 402, refused.text
    assert (await client.post(f"{API}/webhooks/test", headers=headers)).status_code == 200

    bad_inputs = [
        momo_body(phone_number=PHONE + "x"),
        momo_body(phone_number=PHONE, customer=CUSTOMER | {"email": CUSTOMER["firstname"]}),
        momo_body(phone_number=PHONE, amount=-1, customer=CUSTOMER),
        momo_body(phone_number=PHONE, operator=merchant.live_key),
        card_body(customer=CUSTOMER, return_url=f"ftp://{CUSTOMER['email']}"),
    ]
    for body in bad_inputs:
        response = await client.post(f"{API}/payments", json=body, headers=headers)
        assert response.status_code == 422, response.text
    not_json = f'{{"phone_number": "{PHONE}", "key": "{merchant.live_key}"'
    response = await client.post(
        f"{API}/payments", content=not_json, headers=headers | {"content-type": "application/json"}
    )
    assert response.status_code == 422, response.text
    for authorization in (
        "Bearer sk_test_" + "N" * 43,
        f"Basic {merchant.test_key}",
        merchant.live_key,
    ):
        response = await client.get(f"{API}/payments", headers={"Authorization": authorization})
        assert response.status_code == 401, response.text

    crashed = await client.post(
        f"{API}/payments",
        json=momo_body(phone_number=PHONE_CRASH, customer=CUSTOMER),
        headers=headers,
    )
    assert crashed.status_code == 500, crashed.text
    return secrets


@pytest.mark.parametrize("json_lines", [True, False], ids=["json", "console"])
async def test_a_full_run_logs_no_secret_and_no_personal_data(
    runtime: Runtime, database_url: str, tmp_path: Path, failing_sql: None, json_lines: bool
) -> None:
    merchant = await make_merchant(runtime, name="Boutique Awa")
    url, password = with_password(database_url)
    log = tmp_path / "serve.log"
    server = Server(url, log, json_lines)
    try:
        await server.wait_until_up()
        with Receiver() as receiver:
            async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
                handed_out = await scenario(client, merchant, receiver)
            # The payments settle (webhooks), the first delivery is retried, the job crashes.
            await receiver.wait_for(4, within=30)
            await wait_for_line(log, "worker.job_failed")
            await wait_for_line(log, "http.unhandled_error")
    finally:
        server.stop()
    output = logged(log)

    assert "refused by the log test" in output  # the failing SQL was logged, both times
    assert output.count("Traceback") >= 2
    if json_lines:
        lines = [line for line in output.splitlines() if line.strip()]
        assert all(isinstance(json.loads(line), dict) for line in lines), output
        loggers = {json.loads(line).get("logger") for line in lines}
        assert {"uvicorn.error", "alembic.runtime.migration"} <= loggers, loggers
        # One access line per request (issue 12), the crash's 500 included.
        access = [e for e in map(json.loads, lines) if e.get("event") == "http.request"]
        assert {(e["method"], e["route"], e["status"]) for e in access} >= {
            ("POST", f"{API}/payments", 201),
            ("POST", f"{API}/payments", 402),
            ("POST", f"{API}/payments", 500),
            ("GET", f"{API}/payments", 401),
        }
        assert all(len(e["request_id"]) == 32 and e["duration_ms"] >= 0 for e in access)

    digests = (await scalar(runtime, "SELECT string_agg(key_hash, ' ') FROM api_keys")).split()
    webhook_secrets = await webhook_secrets_in_clear(runtime)
    never_logged = {
        "test key": merchant.test_key,
        "live key": merchant.live_key,
        "unknown key": "N" * 43,
        "database password": password,
        **{f"key digest {i}": digest for i, digest in enumerate(digests)},
        **{f"webhook secret {i}": s for i, s in enumerate(handed_out + webhook_secrets)},
        **{
            f"phone {p}": p
            for p in (PHONE, PHONE_REFUSED, PHONE_PLUS, PHONE_CRASH, PHONE_JOB_CRASH)
        },
        **CUSTOMER,
    }
    leaked = {what: value for what, value in never_logged.items() if value in output}
    assert not leaked, f"leaked {sorted(leaked)}:\n{output}"
    # Even no part of a secret: its random part, past the prefix.
    for secret in (merchant.test_key, merchant.live_key, *handed_out):
        assert secret[-20:] not in output


@pytest.mark.parametrize(
    ("text_in", "expected"),
    [
        ("Bearer sk_test_abcDEF123_-x9", "Bearer [redacted]"),
        ("key=sk_live_abcDEF123_-x9 then", "key=sk_live_[redacted] then"),
        ("secret whsec_AbC123xyz", "secret whsec_[redacted]"),
        (
            "postgresql://cauri:s3cr%40t@db.internal:5432/cauri",
            "postgresql://cauri:[redacted]@db.internal:5432/cauri",
        ),
        ("host=db password=hunter2 user=cauri", "host=db password=[redacted] user=cauri"),
        (
            "POST https://shop.example/hooks?id=1&access_token=abc&sig=ff HTTP/1.1",
            "POST https://shop.example/hooks?id=1&access_token=[redacted]&sig=[redacted] HTTP/1.1",
        ),
        ("to awa.diallo+shop@example.com now", "to [redacted]@[redacted] now"),
        ("phone 22997314159 or +22997314159", "phone 2299731**** or +2299731****"),
        ("{'phone_number': '22997314159'}", "{'phone_number': '2299731****'}"),
        (
            "input_value={'firstname': 'Awa', \"lastname\": \"Diallo\"}",
            "input_value={'firstname': '[redacted]', \"lastname\": \"[redacted]\"}",
        ),
        ("boom\nDETAIL:  Failing row contains (22997, Awa)", "boom\nDETAIL:  [redacted]"),
        # Not personal: ids, timestamps, short numbers, constraint names.
        ("2026-11-22T21:14:27.123456Z", "2026-11-22T21:14:27.123456Z"),
        (
            "payment 33bf91fa-ed02-4376-8781-123456789012 at 1800000000.25",
            "payment 33bf91fa-ed02-4376-8781-123456789012 at 1800000000.25",
        ),
        (
            "job 3f2a9c1e12345678 port 5432 amount 1000",
            "job 3f2a9c1e12345678 port 5432 amount 1000",
        ),
        (
            "uq_payments_identifier constraint_name='x'",
            "uq_payments_identifier constraint_name='x'",
        ),
    ],
)
def test_redact_text(text_in: str, expected: str) -> None:
    assert redaction.redact_text(text_in) == expected


def test_redact_blanks_sensitive_fields_at_any_depth() -> None:
    event = {
        "event": "payment.created",
        "amount": 1000,
        "livemode": False,
        "customer": {"firstname": "Awa"},
        "data": {"phone_number": 22997314159, "nested": [{"Email": "a@b.co", "note": "ok"}]},
        "_record": object(),
    }
    redacted = redaction.processor(None, "info", dict(event))
    assert redacted == {
        "event": "payment.created",
        "amount": 1000,
        "livemode": False,
        "customer": "[redacted]",
        "data": {"phone_number": "[redacted]", "nested": [{"Email": "[redacted]", "note": "ok"}]},
        "_record": event["_record"],
    }


def test_only_what_can_carry_a_secret_is_searched() -> None:
    """A `Clean` text (Cauri's own: an event or route name, a request id) passes as it is, so
    that the access line costs no search; a field named as sensitive is blanked all the same,
    and a plain text with the same characters is still searched."""
    shaped_like_a_phone = redaction.Clean("22997314159")
    redacted = redaction.processor(
        None,
        "info",
        {"route": shaped_like_a_phone, "token": redaction.Clean("abc"), "note": "22997314159"},
    )
    assert redacted["route"] is shaped_like_a_phone
    assert redacted["token"] == "[redacted]"
    assert redacted["note"] != "22997314159"


@pytest.mark.parametrize("json_lines", [True, False], ids=["json", "console"])
def test_library_loggers_go_through_the_redaction(json_lines: bool) -> None:
    """uvicorn's, SQLAlchemy's and asyncpg's stdlib loggers, and structlog's own, with an
    exception: each line rendered once, redacted (a fresh process: logging is global)."""
    program = f"""
import logging, structlog
from cauri.kit.logging import configure
logging.getLogger("uvicorn.error").addHandler(logging.StreamHandler())  # as uvicorn does
configure({json_lines})
for name in ("uvicorn.error", "sqlalchemy.engine", "asyncpg", "some.library"):
    logging.getLogger(name).warning("from %s: %s", name, "sk_test_LEAKLEAKLEAK 22997314159")
try:
    raise RuntimeError("postgresql://u:LEAKPASSWORD@h/db whsec_LEAKLEAK")
except RuntimeError:
    logging.getLogger("uvicorn.error").exception("crash")
    structlog.get_logger().exception("own crash", phone_number="22997314159")
"""
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    output = result.stdout + result.stderr
    assert "LEAK" not in output and "22997314159" not in output, output
    assert output.count("2299731****") == 4, output
    assert output.count("sk_test_[redacted]") == 4 and output.count("whsec_[redacted]") == 2
    if json_lines:
        lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
        assert len(lines) == 6, output
