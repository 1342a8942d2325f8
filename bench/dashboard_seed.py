"""A merchant with a year of live traffic, for the dashboard's speed (issue 26): 1,000,000
payments (80 % succeeded, 15 % failed, 5 % pending), 50,000 refunds and 20,000 payouts over
the last 365 days, with their ledger (each succeeded payment, refund and payout a ledger
transaction and its postings; the balance's postings folded into its head, as the ledger
folds them), and a finance member who signs in with a password and a TOTP secret. The rows
are written in SQL (`generate_series`), not through the API: a million requests would take
hours; what the pages read is the same.

Prints one JSON line: the merchant, the member's email, password and TOTP secret, and a
payment's identifier, external_id and number suffix to look up.

    CAURI_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/cauri_dash CAURI_SECRET_KEY=... \\
        uv run python bench/dashboard_seed.py [--payments 1000000]

Written as a superuser with `session_replication_role = replica`: the ledger's per-commit
zero-sum check (a trigger) would queue three million checks; every transaction written here
sums to zero by construction, and `cauri ledger check` confirms it afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import asyncpg

from cauri.config import get_settings
from cauri.connectors.secrets import sealing_keyring
from cauri.kit import migrate
from cauri.kit.db import as_asyncpg, unit_of_work
from cauri.ledger import accounts
from cauri.merchants.service import merchants
from cauri.people import accounts as people
from cauri.people import totp
from cauri.people.realm import MERCHANT
from cauri.runtime import Runtime

PASSWORD = "banc-d-essai-du-tableau-de-bord"  # noqa: S105 - a bench database's member
EMAIL = "finance@bench.example"

PAYMENTS = """
INSERT INTO payments (id, identifier, merchant_id, livemode, external_id, status, amount,
    fee_amount, fee_bearer, amount_refunded, currency, description, payment_mode_id, operator,
    phone_number, customer, created_at, updated_at)
SELECT gen_random_uuid(), 'CAUB' || lpad(n::text, 8, '0'), $1, true, 'order-' || n,
    CASE WHEN n % 20 = 1 THEN 'failed' WHEN n % 20 = 2 THEN 'pending' WHEN n % 10 = 3 THEN
    'failed' ELSE 'succeeded' END,
    500 + (n * 7919) % 49500, ((500 + (n * 7919) % 49500) * 2) / 100, 'customer',
    CASE WHEN n % 20 = 0 THEN (500 + (n * 7919) % 49500) / 10 ELSE 0 END, 'XOF', 'Commande',
    1, 'mtn', '22997' || lpad(((n * 104729) % 1000000)::text, 6, '0'), '{}'::jsonb, at, at
FROM generate_series(1::bigint, $2::bigint) AS n,
    LATERAL (SELECT now() - interval '365 days' * (1 - n::float / $2::bigint) AS at) AS moment
"""

REFUNDS = """
INSERT INTO refunds (reference, payment_id, merchant_id, livemode, status, amount, currency,
    operator, phone_number, created_at, updated_at, completed_at, debited)
SELECT 'rfd_bench_' || p.identifier, p.id, p.merchant_id, true, 'succeeded', p.amount_refunded,
    'XOF', p.operator, p.phone_number, p.created_at + interval '1 hour',
    p.created_at + interval '1 hour', p.created_at + interval '1 hour', true
FROM payments p WHERE p.merchant_id = $1 AND p.amount_refunded > 0
"""

PAYOUTS = """
INSERT INTO payouts (reference, merchant_id, livemode, status, amount, fee_amount, currency,
    operator, phone_number, third_party, debited, created_at, updated_at, completed_at)
SELECT 'pyo_bench_' || n, $1, true, 'succeeded', 20000 + (n * 6151) % 80000, 100, 'XOF', 'mtn',
    '22996' || lpad(((n * 7727) % 1000000)::text, 6, '0'), true, true,
    now() - interval '365 days' * (1 - n::float / $2::bigint),
    now() - interval '365 days' * (1 - n::float / $2::bigint),
    now() - interval '365 days' * (1 - n::float / $2::bigint)
FROM generate_series(1::bigint, $2::bigint) AS n
"""

# Each movement's transaction, then its postings: (account, amount) per line, zero-sum.
LEDGER = """
WITH moved AS (
    SELECT 'payment' AS kind, p.id::text AS reference, p.updated_at AS at,
        p.amount AS amount, p.fee_amount AS fee
    FROM payments p WHERE p.merchant_id = $1::varchar AND p.status = 'succeeded'
    UNION ALL
    SELECT 'refund', r.reference, r.created_at, -r.amount, 0
    FROM refunds r WHERE r.merchant_id = $1
    UNION ALL
    SELECT 'payout', o.reference, o.created_at, -(o.amount + o.fee_amount), o.fee_amount
    FROM payouts o WHERE o.merchant_id = $1
), written AS (
    INSERT INTO ledger_transactions (kind, reference, livemode, created_at)
    SELECT kind, reference, true, at FROM moved ORDER BY at
    RETURNING id, kind, reference, created_at
)
INSERT INTO ledger_postings (transaction_id, created_at, account, currency, amount, folded)
SELECT w.id, w.created_at, line.account, 'XOF', line.amount, line.account = $2::varchar
FROM written w JOIN moved m ON m.kind = w.kind AND m.reference = w.reference
CROSS JOIN LATERAL (VALUES
    ($2::varchar, m.amount),
    ($3::varchar, -(m.amount + m.fee)),
    ($4::varchar, m.fee)
) AS line(account, amount)
WHERE line.amount <> 0
"""

HEAD = """
INSERT INTO ledger_accounts (code, currency, livemode, allow_negative, balance)
SELECT $1::varchar, 'XOF', true, false, coalesce(sum(amount), 0) FROM ledger_postings
WHERE account = $1::varchar
ON CONFLICT (code) DO UPDATE SET balance = excluded.balance
"""


async def _merchant_and_member() -> tuple[str, str]:
    settings = get_settings()
    assert settings.database_url is not None, "CAURI_DATABASE_URL is required"
    await migrate.upgrade_async(as_asyncpg(settings.database_url))
    runtime = Runtime.build(settings, url=as_asyncpg(settings.database_url))
    secret = totp.new_secret()
    try:
        async with unit_of_work(runtime.sessionmaker) as session:
            now = runtime.clock.now()
            made = await merchants.create(
                session,
                name="Banc d'essai",
                status="active",
                now=now,
                box=sealing_keyring(settings),
            )
            member = await people.create(
                session,
                MERCHANT,
                email=EMAIL,
                role="finance",
                now=now,
                merchant_id=made.merchant.id,
            )
            await people.set_password(session, member, PASSWORD)
            member.totp_secret = totp.seal(settings.secret_key, member.id, secret)
            member.totp_enabled_at = now
            return made.merchant.id, secret
    finally:
        await runtime.close()


async def seed(payments: int) -> dict[str, object]:
    merchant_id, secret = await _merchant_and_member()
    settings = get_settings()
    assert settings.database_url is not None
    url = as_asyncpg(settings.database_url).replace("postgresql+asyncpg://", "postgresql://", 1)
    connection = await asyncpg.connect(url)
    own = accounts.merchant_available(merchant_id, True, "XOF").code
    clearing = accounts.operator_clearing("mtn", True, "XOF").code
    fees = accounts.platform("fees", True, "XOF").code
    started = time.monotonic()
    try:
        async with connection.transaction():
            await connection.execute("SET LOCAL session_replication_role = replica")
            await connection.execute(PAYMENTS, merchant_id, payments)
            await connection.execute(REFUNDS, merchant_id)
            await connection.execute(PAYOUTS, merchant_id, payments // 50)
            await connection.execute(LEDGER, merchant_id, own, clearing, fees)
            await connection.execute(HEAD, own)
        await connection.execute("ANALYZE")
        found = await connection.fetchrow(
            "SELECT identifier, external_id, right(phone_number, 4) AS digits FROM payments "
            "WHERE merchant_id = $1 AND status = 'succeeded' ORDER BY created_at DESC LIMIT 1",
            merchant_id,
        )
        assert found is not None
    finally:
        await connection.close()
    return {
        "merchant": merchant_id,
        "email": EMAIL,
        "password": PASSWORD,
        "totp_secret": secret,
        "payment": found["identifier"],
        "external_id": found["external_id"],
        "digits": found["digits"],
        "seconds": round(time.monotonic() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--payments", type=int, default=1_000_000)
    print(json.dumps(asyncio.run(seed(parser.parse_args().payments))))


if __name__ == "__main__":
    main()
