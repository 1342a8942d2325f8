"""A failed payout gives its fee back without touching the platform's shared fee account beyond
its own posting (issue 8; DESIGN invariant 3): platform revenue is never locked or folded."""

from __future__ import annotations

from decimal import Decimal

import httpx
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.payouts.service import payouts
from cauri.platform.service import update_settings
from cauri.runtime import Runtime
from tests.payments.builders import merchant_available, platform_fees
from tests.payouts.builders import FAILS_LATER, create, top_up
from tests.support import make_merchant, scalar

OTHER_MERCHANTS_FEES = 10_000
FEES_ACCOUNT = "platform:fees:test:XOF"

# Ten thousand fees of other merchants' payments, each its own balanced transaction, never
# folded: what a busy platform fee account looks like.
_MANY_FEES = text(
    "WITH tx AS (INSERT INTO ledger_transactions (kind, reference, livemode, created_at) "
    "  SELECT 'payment', 'other-' || n, false, now() FROM generate_series(1, :count) AS n "
    "  RETURNING id, created_at) "
    "INSERT INTO ledger_postings (transaction_id, created_at, account, currency, amount, folded) "
    "SELECT tx.id, tx.created_at, side.account, 'XOF', side.amount, false FROM tx, "
    "(VALUES ('operator:mtn:clearing:test:XOF', -5), (:fees, 5)) AS side(account, amount)"
)


async def test_a_failed_payout_neither_locks_nor_folds_the_platform_fee_account(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    async with unit_of_work(runtime.sessionmaker) as session:
        await update_settings(
            session, {"payout_fee_fixed": 25, "payout_fee_percent": Decimal(0)}, runtime.clock.now()
        )
        await session.execute(_MANY_FEES, {"count": OTHER_MERCHANTS_FEES, "fees": FEES_ACCOUNT})
    await top_up(runtime, merchant.id, 5_000)
    response = await create(client, merchant.headers(), amount=1_000, phone_number=FAILS_LATER)
    assert response.status_code == 201, response.text
    payout = response.json()["data"]
    assert payout["status"] == "pending" and payout["fee_amount"] == 25
    assert await merchant_available(runtime, merchant.id) == 3_975

    async with runtime.sessionmaker() as holder:
        # Another transaction holds the fee account's row, as a lock every merchant shared
        # would be held.
        await holder.execute(
            text(
                "INSERT INTO ledger_accounts (code, currency, livemode, allow_negative) "
                "VALUES (:code, 'XOF', false, false) ON CONFLICT DO NOTHING"
            ),
            {"code": FEES_ACCOUNT},
        )
        await holder.execute(
            text("SELECT 1 FROM ledger_accounts WHERE code = :code FOR UPDATE"),
            {"code": FEES_ACCOUNT},
        )
        # The status job finds the payout failed: without a wait on that lock (a wait would
        # end in a lock timeout error here).
        clock.advance(runtime.settings.test_settle_delay)
        async with unit_of_work(runtime.sessionmaker) as session:
            await session.execute(text("SET LOCAL lock_timeout = '2s'"))
            await payouts.check_status(session, runtime, payout["reference"])
        await holder.rollback()

    found = await client.get(f"/api/v1/payouts/{payout['reference']}", headers=merchant.headers())
    assert found.json()["data"]["status"] == "failed"
    assert await merchant_available(runtime, merchant.id) == 5_000
    assert await platform_fees(runtime) == OTHER_MERCHANTS_FEES * 5
    # The reversal is one transaction of three postings, and no fee posting was folded.
    assert (
        await scalar(
            runtime,
            "SELECT count(*) FROM ledger_postings p JOIN ledger_transactions t "
            "ON t.id = p.transaction_id WHERE t.kind = 'payout_reversal'",
        )
        == 3
    )
    assert (
        await scalar(
            runtime,
            "SELECT count(*) FROM ledger_postings WHERE account = :a AND folded",
            a=FEES_ACCOUNT,
        )
        == 0
    )
