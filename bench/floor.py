"""The floors for `POST /api/v1/payments` and `POST /api/v1/payouts`: the least a Python
server can do to record the same durable payment (or payout) as Cauri, to measure Cauri
against (issue 13; bench/compare.sh and bench/payouts.sh run both).

A bare ASGI application (no framework, no middleware) served by uvicorn (uvloop and
httptools, as `cauri serve` gets them), with one asyncpg pool per process. It writes into
Cauri's own tables, in the database Cauri uses (`CAURI_DATABASE_URL`, after `cauri migrate`),
so both servers pay for the same indexes, constraints and foreign keys.

What one request does, exactly:

1. Reads the body (JSON), requires `amount` (a positive whole number: currencies without
   decimals only, which covers every Mobile Money mode), `operator` (a Mobile Money mode of
   Cauri's catalogue, looked up in memory), `phone_number` (digits, an optional leading `+`)
   ending in `0000`, and optionally `currency` (must be the mode's) and `customer`
   (`firstname`, `lastname`, `email`). Anything else gets a 422.
2. Requires `Authorization: Bearer sk_test_...` and computes the key's SHA-256 digest.
3. Sends ONE statement (asyncpg prepares it once per connection, then each request is one
   Bind/Execute/Sync round trip), in its own implicit transaction, committed with the
   server's `synchronous_commit` (checked to be `on` at startup: the commit waits for the
   WAL flush, as Cauri's does). Its CTEs:
   - the API key check: `api_keys` joined to `merchants` by digest, not revoked, not expired
     (test keys only);
   - the fee terms, as Cauri reads them on every payment: the merchant's `fee_rules` row for
     the mode, else the platform's `platform_settings` defaults, the merchant's fee bearer;
     a disabled mode records nothing;
   - the fee (percent rounded half up, plus the fixed part of the currency) and the bounds
     Cauri enforces (total debited 10..1,000,000; a merchant-borne fee below the amount);
   - the `payments` row, inserted `succeeded` with the same columns and values Cauri writes
     (`customer` as given, `metadata` JSON null, `created_at` = `updated_at`);
   - the ledger: one `ledger_transactions` row (kind `payment`, reference the payment id)
     and its postings, zero parts left out as Cauri does: operator clearing
     `-(total debited)`, the merchant's available balance `+net`, platform fees `+fee`.
     A collection only credits guarded accounts: like Cauri it locks and updates no
     `ledger_accounts` row;
   - the `payment.succeeded` event, its `data` the payment object with the mode's country
     (built with `jsonb_build_object`, where Cauri builds it in Python);
   - when the merchant's test environment has a webhook endpoint: the `webhook_deliveries`
     row and the `jobs` row of its first attempt (lane `webhooks-test`, group
     `<merchant>/test`), and `pg_notify('cauri_jobs', '')` as Cauri's enqueue does (the
     notification queue serialises commits, so it is part of the floor).
4. Answers 201 with the payment object in Cauri's envelope (`{"success": true, "data":
   ...}`), 401 for an unknown, revoked or expired key, 422 otherwise.

What it leaves out, on purpose (each is a cost Cauri pays and the floor does not):
rate limiting and its headers, the request id and `nosniff` headers, the body size limit
middleware, request logging and metrics, OpenAPI/Pydantic validation and French error
envelopes beyond a one-line message, phone number normalisation by libphonenumber, the
`external_id` idempotency (the bench sends none), `description`, `metadata`, `callback_url`,
`return_url` and `otp`, live keys, cards, and every outcome but success (the simulator
settles a number ending in 0000 at once). It never delivers webhooks: run Cauri with
`--no-worker` to compare like with like (bench/compare.sh does).

The floor for `POST /api/v1/payouts` (bench/payouts.sh), the same way: a test payout to a
third party's number ending in `0000`, which Cauri's simulator pays at once. The body takes
`amount`, `operator`, `phone_number`, optionally `currency` and `external_id`; ONE statement
checks the key, reads the payout fee terms (the merchant's `payout` rule, else the
platform's payout defaults; XOF/XAF fixed part), enforces the bounds (amount ≥ 10, total
debited ≤ 1,000,000), inserts the `payouts` row already `succeeded` and `debited` (a taken
`external_id` writes nothing), debits the merchant's balance through Cauri's `ledger_debit`
(the lock of its head row, the fold of its unfolded credits, the check, the debit: the
invariant any server must keep, so the floor pays for it too), appends the `payout` ledger
transaction and its postings (the balance `-(amount + fee)` folded, operator clearing
`+amount`, platform fees `+fee`), and writes `payout.succeeded` (the payout object built
with `jsonb_build_object`) with its delivery, job and NOTIFY. A balance that does not cover
it fails the statement: 402 `insufficient_funds`, nothing written. It leaves out what
Cauri's payments route pays on top (above), and own-account payouts, live caps and
approvals, and every outcome but success.

    CAURI_DATABASE_URL=postgresql://... uv run uvicorn --app-dir bench floor:app \
        --workers 2 --port 8802 --no-access-log --log-level warning
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import string
import uuid
from datetime import UTC, datetime
from typing import Any

import asyncpg

from cauri.operators import catalogue

PATH = "/api/v1/payments"
PAYOUTS_PATH = "/api/v1/payouts"
TEST_PREFIX = "sk_test_"
IDENTIFIER_ALPHABET = string.ascii_uppercase + string.digits
CUSTOMER_FIELDS = ("firstname", "lastname", "email")
ACCEPTED_FIELDS = {"amount", "operator", "phone_number", "currency", "customer"}
PAYOUT_FIELDS = {"amount", "operator", "phone_number", "currency", "external_id"}
NOT_COVERED = "C0402"  # the balance does not cover the payout (Cauri's ledger_debit)
POOL_MAX = 20  # Cauri's engine: pool_size 20 per process

# The event's delivery to the merchant's test endpoint, if it has one, and the job of its
# first attempt, then the worker's wake-up, as Cauri's enqueue does: the tail of both
# statements, after their CTE `ev` (the floor records test-mode money only).
OUTBOX = """
delivery AS (
  INSERT INTO webhook_deliveries (id, event_id, merchant_id, livemode, event, url, status,
    attempts, series_attempts, created_at, next_attempt_at)
  SELECT ev.id, ev.id, ev.merchant_id, ev.livemode, ev.type, w.url, 'pending', 0, 0,
    ev.created_at, ev.created_at
  FROM ev JOIN webhook_endpoints w
    ON w.merchant_id = ev.merchant_id AND w.livemode = ev.livemode AND w.url IS NOT NULL
  RETURNING id, merchant_id, livemode, created_at
),
job AS (
  INSERT INTO jobs (kind, lane, group_key, payload, run_at, max_attempts, created_at)
  SELECT 'webhooks.deliver', 'webhooks-test', d.merchant_id || '/test',
    jsonb_build_object('delivery_id', d.id::text, 'attempt', 1), d.created_at, 10,
    d.created_at
  FROM delivery d
  RETURNING id
),
notified AS (SELECT pg_notify('cauri_jobs', '') FROM job)"""


def with_outbox(statement: str) -> str:
    """The statement with OUTBOX in place of its line `-- OUTBOX`."""
    return statement.replace("-- OUTBOX", OUTBOX.strip())


# $1 key digest, $2 payment id, $3 identifier, $4 amount (minor units), $5 currency,
# $6 mode id, $7 operator, $8 phone number, $9 now, $10 event id, $11 fee rule mode,
# $12 now as ISO 8601 text, $13 the event's payment_mode, $14 customer as given.
RECORD = with_outbox(
    """
WITH caller AS (
  SELECT k.merchant_id, k.livemode, m.fee_bearer
  FROM api_keys k JOIN merchants m ON m.id = k.merchant_id
  WHERE k.key_hash = $1::text AND k.revoked_at IS NULL
    AND (k.expires_at IS NULL OR k.expires_at > $9::timestamptz) AND NOT k.livemode
),
priced AS (
  SELECT c.merchant_id, c.livemode, c.fee_bearer,
    CASE WHEN c.livemode THEN 'live' ELSE 'test' END AS env,
    coalesce(r.disabled, false) AS disabled,
    (round($4::bigint * coalesce(r.percent, s.fee_percent, 0) / 100)
      + CASE $5::text
          WHEN 'EUR' THEN coalesce(r.fixed_eur, s.fee_fixed_eur, 0)
          WHEN 'USD' THEN coalesce(r.fixed_usd, s.fee_fixed_usd, 0)
          ELSE coalesce(r.fixed, s.fee_fixed, 0) END)::bigint AS fee
  FROM caller c
  LEFT JOIN platform_settings s ON s.id = 1
  LEFT JOIN fee_rules r ON r.merchant_id = c.merchant_id AND r.mode = $11::text
),
amounts AS (
  SELECT p.*,
    CASE WHEN p.fee_bearer = 'customer' THEN $4 + p.fee ELSE $4 END AS debited,
    CASE WHEN p.fee_bearer = 'customer' THEN $4 ELSE $4 - p.fee END AS counted
  FROM priced p
  WHERE NOT p.disabled
),
pay AS (
  INSERT INTO payments (id, identifier, merchant_id, livemode, status, amount, fee_amount,
    fee_bearer, currency, payment_mode_id, operator, phone_number, customer, metadata,
    created_at, updated_at)
  SELECT $2::uuid, $3::text, a.merchant_id, a.livemode, 'succeeded', $4, a.fee, a.fee_bearer,
    $5, $6::integer, $7::text, $8::text, $14::jsonb, 'null'::jsonb, $9, $9
  FROM amounts a
  WHERE a.debited BETWEEN 10 AND 1000000 AND (a.fee_bearer = 'customer' OR a.fee < $4)
  RETURNING *
),
tx AS (
  INSERT INTO ledger_transactions (kind, reference, livemode, created_at)
  SELECT 'payment', pay.id::text, pay.livemode, pay.created_at FROM pay
  RETURNING id, created_at
),
postings AS (
  INSERT INTO ledger_postings (transaction_id, created_at, account, currency, amount, folded)
  SELECT tx.id, tx.created_at, e.account, pay.currency, e.amount, false
  FROM tx CROSS JOIN pay CROSS JOIN amounts a CROSS JOIN LATERAL (VALUES
    (1, 'operator:' || lower(pay.operator) || ':clearing:' || a.env || ':' || pay.currency,
     -a.debited),
    (2, 'merchant:' || pay.merchant_id || ':available:' || a.env || ':' || pay.currency,
     a.counted),
    (3, 'platform:fees:' || a.env || ':' || pay.currency, pay.fee_amount)
  ) AS e(n, account, amount)
  WHERE e.amount <> 0
  ORDER BY e.n
),
ev AS (
  INSERT INTO events (id, merchant_id, livemode, type, data, callback_url, created_at)
  SELECT $10::uuid, pay.merchant_id, pay.livemode, 'payment.' || pay.status,
    jsonb_build_object(
      'reference', pay.id::text, 'identifier', pay.identifier,
      'external_id', pay.external_id, 'status', pay.status, 'amount', pay.amount,
      'fee_amount', pay.fee_amount, 'total_amount', a.debited, 'fee_bearer', pay.fee_bearer,
      'net_amount', a.counted, 'amount_refunded', pay.amount_refunded,
      'currency', pay.currency, 'description', pay.description,
      'payment_mode', $13::jsonb,
      'customer', jsonb_build_object(
        'firstname', pay.customer -> 'firstname', 'lastname', pay.customer -> 'lastname',
        'email', pay.customer -> 'email', 'phone_number', pay.phone_number),
      'payment_url', pay.payment_url, 'failure_code', NULL::text,
      'failure_message', NULL::text, 'metadata', pay.metadata, 'livemode', pay.livemode,
      'checkout_session', NULL::text, 'payment_link', NULL::text,
      'created_at', $12::text, 'updated_at', $12::text),
    NULL, pay.created_at
  FROM pay CROSS JOIN amounts a
  RETURNING id, merchant_id, livemode, type, created_at
),
-- OUTBOX
SELECT (SELECT count(*) FROM caller) AS known, (SELECT count(*) FROM notified) AS notified,
  pay.fee_amount, pay.fee_bearer, a.debited, a.counted
FROM (VALUES (1)) AS one (x)
LEFT JOIN pay ON true
LEFT JOIN amounts a ON true
"""
)


# $1 key digest, $2 payout reference, $3 amount (minor units), $4 currency, $5 operator,
# $6 now, $7 external_id, $8 phone number, $9 event id, $10 now as ISO 8601 text.
PAYOUT = with_outbox(
    """
WITH caller AS (
  SELECT k.merchant_id
  FROM api_keys k JOIN merchants m ON m.id = k.merchant_id
  WHERE k.key_hash = $1::text AND k.revoked_at IS NULL
    AND (k.expires_at IS NULL OR k.expires_at > $6::timestamptz) AND NOT k.livemode
),
priced AS (
  SELECT c.merchant_id, coalesce(r.disabled, false) AS disabled,
    (round($3::bigint * coalesce(r.percent, s.payout_fee_percent, 0) / 100)
      + coalesce(r.fixed, s.payout_fee_fixed, 0))::bigint AS fee
  FROM caller c
  LEFT JOIN platform_settings s ON s.id = 1
  LEFT JOIN fee_rules r ON r.merchant_id = c.merchant_id AND r.mode = 'payout'
),
pyo AS (
  INSERT INTO payouts (reference, merchant_id, livemode, external_id, status, amount,
    fee_amount, currency, operator, phone_number, third_party, debited, created_at,
    updated_at, completed_at)
  SELECT $2::text, p.merchant_id, false, $7::text, 'succeeded', $3, p.fee, $4::text, $5::text,
    $8::text, true, true, $6, $6, $6
  FROM priced p
  WHERE NOT p.disabled AND $3 >= 10 AND $3 + p.fee <= 1000000
  ON CONFLICT (merchant_id, livemode, external_id) WHERE external_id IS NOT NULL DO NOTHING
  RETURNING *
),
debit AS (
  SELECT ledger_debit(ARRAY['merchant:' || pyo.merchant_id || ':available:test:' || pyo.currency],
    ARRAY[pyo.currency], ARRAY[false], ARRAY[-(pyo.amount + pyo.fee_amount)], true) AS d
  FROM pyo
),
tx AS (
  INSERT INTO ledger_transactions (kind, reference, livemode, created_at)
  SELECT 'payout', pyo.reference, false, pyo.created_at FROM pyo, debit WHERE (debit.d).debited
  RETURNING id, created_at
),
postings AS (
  INSERT INTO ledger_postings (transaction_id, created_at, account, currency, amount, folded)
  SELECT tx.id, tx.created_at, e.account, pyo.currency, e.amount, e.folded
  FROM tx CROSS JOIN pyo CROSS JOIN LATERAL (VALUES
    (1, 'merchant:' || pyo.merchant_id || ':available:test:' || pyo.currency,
     -(pyo.amount + pyo.fee_amount), true),
    (2, 'operator:' || lower(pyo.operator) || ':clearing:test:' || pyo.currency, pyo.amount,
     false),
    (3, 'platform:fees:test:' || pyo.currency, pyo.fee_amount, false)
  ) AS e(n, account, amount, folded)
  WHERE e.amount <> 0
  ORDER BY e.n
),
ev AS (
  INSERT INTO events (id, merchant_id, livemode, type, data, callback_url, created_at)
  SELECT $9::uuid, pyo.merchant_id, false, 'payout.succeeded',
    jsonb_build_object(
      'reference', pyo.reference, 'status', pyo.status, 'amount', pyo.amount,
      'fee_amount', pyo.fee_amount, 'total_debited', pyo.amount + pyo.fee_amount,
      'currency', pyo.currency, 'operator', pyo.operator,
      'phone_number', left(pyo.phone_number, -4) || '****', 'beneficiary_name', NULL::text,
      'reason', NULL::text, 'awaiting_approval', false, 'failure_code', NULL::text,
      'failure_message', NULL::text, 'external_id', pyo.external_id, 'metadata', NULL::jsonb,
      'livemode', false, 'completed_at', $10::text, 'created_at', $10::text),
    NULL, pyo.created_at
  FROM pyo
  RETURNING id, merchant_id, livemode, type, created_at
),
-- OUTBOX
SELECT (SELECT count(*) FROM caller) AS known, (SELECT count(*) FROM notified) AS notified,
  pyo.fee_amount
FROM (VALUES (1)) AS one (x)
LEFT JOIN pyo ON true
"""
)


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def database_url() -> str:
    url = os.environ.get("CAURI_DATABASE_URL")
    if not url:
        raise SystemExit("floor: CAURI_DATABASE_URL is required (the database Cauri uses)")
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


def fields_of(body: bytes, accepted: set[str]) -> dict[str, Any]:
    try:
        fields = json.loads(body)
    except ValueError:
        raise Refused(422, "invalid_request", "Corps JSON illisible.") from None
    if not isinstance(fields, dict) or not fields.keys() <= accepted:
        raise Refused(422, "invalid_request", "Champ non pris en charge par le plancher.")
    return fields


def money_of(fields: dict[str, Any]) -> tuple[catalogue.PaymentMode, int, str, str]:
    """The request's Mobile Money mode, amount, currency and number, or Refused (422)."""
    mode = catalogue.find(str(fields.get("operator", "")))
    if mode is None or mode.is_card:
        raise Refused(422, "invalid_request", "Opérateur Mobile Money inconnu.")
    amount = fields.get("amount")
    if isinstance(amount, float) and amount.is_integer():
        amount = int(amount)
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise Refused(422, "invalid_request", "Montant invalide.")
    currency = fields.get("currency") or mode.currency
    if currency != mode.currency:
        raise Refused(422, "invalid_request", "Devise invalide pour cet opérateur.")
    phone = str(fields.get("phone_number", "")).removeprefix("+")
    if not phone.isdigit() or not phone.endswith("0000"):
        raise Refused(422, "invalid_request", "Le plancher n'enregistre que les numéros en 0000.")
    return mode, amount, currency, phone


def parse(body: bytes) -> tuple[catalogue.PaymentMode, int, str, str, dict[str, Any]]:
    """The request's mode, amount, currency, number and customer, or Refused (422)."""
    fields = fields_of(body, ACCEPTED_FIELDS)
    mode, amount, currency, phone = money_of(fields)
    given = fields.get("customer") or {}
    if not isinstance(given, dict):
        raise Refused(422, "invalid_request", "Client invalide.")
    customer = {name: given.get(name) for name in CUSTOMER_FIELDS} | {"phone_number": None}
    return mode, amount, currency, phone, customer


def caller_digest(headers: list[tuple[bytes, bytes]]) -> str:
    for name, value in headers:
        if name == b"authorization":
            scheme, _, key = value.decode("latin-1").partition(" ")
            key = key.strip()
            if scheme.lower() == "bearer" and key.startswith(TEST_PREFIX):
                return hashlib.sha256(key.encode()).hexdigest()
    raise Refused(401, "unauthorized", "Clé API absente ou invalide.")


async def record(pool: asyncpg.Pool, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    """One durable payment; its object as the response body."""
    mode, amount, currency, phone, customer = parse(body)
    digest = caller_digest(headers)
    payment_id, event_id = uuid.uuid4(), uuid.uuid4()
    identifier = "CAU" + "".join(secrets.choice(IDENTIFIER_ALPHABET) for _ in range(12))
    now = datetime.now(UTC)
    stamp = now.isoformat()
    summary = {"id": mode.id, "name": mode.name, "type": mode.type.value, "operator": mode.operator}
    event_mode = summary | {"country": mode.country, "country_code": mode.country_code}
    row = await pool.fetchrow(
        RECORD,
        digest,
        payment_id,
        identifier,
        amount,
        currency,
        mode.id,
        mode.operator,
        phone,
        now,
        event_id,
        mode.operator.lower(),
        stamp,
        json.dumps(event_mode),
        json.dumps(customer),
    )
    if not row["known"]:
        raise Refused(401, "unauthorized", "Clé API absente ou invalide.")
    if row["fee_amount"] is None:
        raise Refused(422, "invalid_request", "Moyen fermé ou montant hors bornes.")
    payment = {
        "reference": str(payment_id),
        "identifier": identifier,
        "external_id": None,
        "status": "succeeded",
        "amount": amount,
        "fee_amount": row["fee_amount"],
        "total_amount": row["debited"],
        "fee_bearer": row["fee_bearer"],
        "net_amount": row["counted"],
        "amount_refunded": 0,
        "currency": currency,
        "description": None,
        "payment_mode": summary,
        "customer": customer | {"phone_number": phone},
        "payment_url": None,
        "failure_code": None,
        "failure_message": None,
        "metadata": None,
        "livemode": False,
        "checkout_session": None,
        "payment_link": None,
        "created_at": stamp,
        "updated_at": stamp,
    }
    return json.dumps({"success": True, "data": payment}).encode()


async def pay_out(pool: asyncpg.Pool, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    """One durable payout, paid at once; its object as the response body."""
    fields = fields_of(body, PAYOUT_FIELDS)
    mode, amount, currency, phone = money_of(fields)
    external_id = fields.get("external_id")
    if external_id is not None and not isinstance(external_id, str):
        raise Refused(422, "invalid_request", "external_id invalide.")
    digest = caller_digest(headers)
    reference = f"pyo_{secrets.token_hex(12)}"
    now = datetime.now(UTC)
    stamp = now.isoformat()
    try:
        row = await pool.fetchrow(
            PAYOUT, digest, reference, amount, currency, mode.operator, now, external_id, phone,
            uuid.uuid4(), stamp,
        )  # fmt: skip
    except asyncpg.PostgresError as error:
        if error.sqlstate == NOT_COVERED:
            raise Refused(402, "insufficient_funds", "Solde insuffisant.") from None
        raise
    if not row["known"]:
        raise Refused(401, "unauthorized", "Clé API absente ou invalide.")
    if row["fee_amount"] is None:
        raise Refused(422, "invalid_request", "Transferts fermés, montant hors bornes ou rejeu.")
    fee = row["fee_amount"]
    payout = {
        "reference": reference,
        "status": "succeeded",
        "amount": amount,
        "fee_amount": fee,
        "total_debited": amount + fee,
        "currency": currency,
        "operator": mode.operator,
        "phone_number": phone[:-4] + "****",
        "beneficiary_name": None,
        "reason": None,
        "awaiting_approval": False,
        "failure_code": None,
        "failure_message": None,
        "external_id": external_id,
        "metadata": None,
        "livemode": False,
        "completed_at": stamp,
        "created_at": stamp,
    }
    return json.dumps({"success": True, "data": payout}).encode()


async def answer(send: Any, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def read_body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def lifespan(state: dict[str, Any], receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            pool = await asyncpg.create_pool(database_url(), min_size=2, max_size=POOL_MAX)
            durability = await pool.fetchval("SHOW synchronous_commit")
            if durability != "on":
                await send(
                    {
                        "type": "lifespan.startup.failed",
                        "message": f"synchronous_commit is {durability}, not on: not comparable",
                    }
                )
                return
            state["pool"] = pool
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            if "pool" in state:
                await state["pool"].close()
            await send({"type": "lifespan.shutdown.complete"})
            return


_STATE: dict[str, Any] = {}
ROUTES = {PATH: record, PAYOUTS_PATH: pay_out}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await lifespan(_STATE, receive, send)
        return
    if scope["type"] != "http":
        return
    handle = ROUTES.get(scope["path"]) if scope["method"] == "POST" else None
    if handle is None:
        await answer(send, 404, b'{"success": false, "error": {"code": "not_found"}}')
        return
    body = await read_body(receive)
    try:
        await answer(send, 201, await handle(_STATE["pool"], scope["headers"], body))
    except Refused as refused:
        error = {"code": refused.code, "message": refused.message}
        await answer(send, refused.status, json.dumps({"success": False, "error": error}).encode())
