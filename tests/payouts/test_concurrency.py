"""Payouts under concurrency (DESIGN invariants 3 and 4): simultaneous requests through the
app, asserting what happened and what did not."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from decimal import Decimal

import httpx

from cauri.kit.db import unit_of_work
from cauri.platform.service import update_settings
from cauri.runtime import Runtime
from tests.payments.builders import PAYMENTS, merchant_available
from tests.payouts.builders import (
    REFUSED,
    STAYS_PENDING,
    SUCCEEDS,
    create,
    live_operator,
    set_limits,
    top_up,
)
from tests.support import make_merchant, momo_body, scalar

FEE = 10


async def test_200_simultaneous_payouts_never_overdraw_the_balance(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    async with unit_of_work(runtime.sessionmaker) as session:
        await update_settings(
            session,
            {"payout_fee_fixed": FEE, "payout_fee_percent": Decimal(0)},
            runtime.clock.now(),
        )
    covered = 60
    await top_up(runtime, merchant.id, covered * (1000 + FEE) + 500)
    # 20 refused at initiation (they take nothing), the others split between an immediate
    # success and a payout left pending.
    numbers = [
        REFUSED if n % 10 == 0 else (SUCCEEDS if n % 2 else STAYS_PENDING) for n in range(200)
    ]
    responses = await asyncio.gather(
        *(
            create(client, merchant.headers(), amount=1000, phone_number=number)
            for number in numbers
        )
    )

    outcomes = Counter(
        r.json()["error"]["code"] if r.status_code >= 400 else r.status_code for r in responses
    )
    # The balance is checked before the operator is asked: a refused number that came after
    # the balance ran out is insufficient_funds, one before it payout_failed.
    assert outcomes[201] == covered
    assert outcomes["payout_failed"] + outcomes["insufficient_funds"] == 200 - covered
    assert set(outcomes) == {201, "payout_failed", "insufficient_funds"}
    assert await merchant_available(runtime, merchant.id) == 500
    by_status = await scalar(
        runtime,
        "SELECT json_object_agg(status, n) FROM "
        "(SELECT status, count(*) AS n FROM payouts GROUP BY status) AS s",
    )
    created = Counter(r.json()["data"]["status"] for r in responses if r.status_code == 201)
    expected = created | Counter(failed=outcomes["payout_failed"])
    assert by_status == {status: n for status, n in expected.items() if n}
    debited = await scalar(
        runtime,
        "SELECT -sum(amount) FROM ledger_postings WHERE account = :account AND amount < 0",
        account=f"merchant:{merchant.id}:available:test:XOF",
    )
    taken = await scalar(
        runtime, "SELECT sum(amount + fee_amount) FROM payouts WHERE status <> 'failed'"
    )
    assert debited == taken == covered * (1000 + FEE)


async def test_payouts_and_payments_at_once_on_one_balance_lose_nothing_and_never_overdraw(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Payouts paid in one statement (the balance locked by `ledger_debit` inside it) while
    payments credit the same balance without a lock: every credit is counted by the debits
    after it, whatever the order they commit in, and no debit takes what is not there."""
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 20 * 1000)
    operations = [create(client, merchant.headers(), amount=1000) for _ in range(100)]
    operations += [
        client.post(PAYMENTS, json=momo_body(amount=1000), headers=merchant.headers())
        for _ in range(50)
    ]
    random.Random(11).shuffle(operations)
    responses = await asyncio.gather(*operations)

    payouts = [r for r in responses if r.request.url.path.endswith("/payouts")]
    payments = [r for r in responses if r.request.url.path.endswith("/payments")]
    assert Counter(r.status_code for r in payments) == {201: 50}
    outcomes = Counter(r.status_code for r in payouts)
    assert set(outcomes) <= {201, 402}
    assert 20 <= outcomes[201] <= 70
    # What came in, less what went out: nothing lost, nothing taken twice, never below zero.
    remaining = 20 * 1000 + 50 * 1000 - outcomes[201] * 1000
    assert await merchant_available(runtime, merchant.id) == remaining >= 0
    debits = await scalar(
        runtime,
        "SELECT count(*) FROM ledger_transactions WHERE kind = 'payout' AND reference IN "
        "(SELECT reference FROM payouts WHERE merchant_id = :merchant)",
        merchant=merchant.id,
    )
    assert debits == outcomes[201] == await scalar(runtime, "SELECT count(*) FROM payouts")
    # The last debit folds every credit: covering exactly what is left succeeds.
    if remaining:
        final = await create(client, merchant.headers(), amount=remaining)
        assert final.status_code == 201, final.text
        assert await merchant_available(runtime, merchant.id) == 0


async def test_simultaneous_replays_make_one_payout(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 100_000)
    responses = await asyncio.gather(
        *(create(client, merchant.headers(), external_id="once", amount=1000) for _ in range(50))
    )
    assert Counter(r.status_code for r in responses) == {201: 1, 200: 49}
    assert len({r.json()["data"]["reference"] for r in responses}) == 1
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 1
    assert await merchant_available(runtime, merchant.id) == 99_000


async def test_simultaneous_third_party_payouts_never_exceed_the_daily_cap(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    live_operator(runtime)
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 1_000_000, livemode=True)
    await set_limits(runtime, merchant.id, daily=10_000)
    await create(client, merchant.headers(True), amount=2500)
    responses = await asyncio.gather(
        *(create(client, merchant.headers(True), amount=1000) for _ in range(40))
    )
    assert Counter(r.status_code for r in responses) == {201: 7, 403: 33}
    assert {r.json()["error"]["code"] for r in responses if r.status_code == 403} == {
        "payout_limit_exceeded"
    }
    assert await scalar(runtime, "SELECT sum(amount) FROM payouts WHERE status <> 'failed'") == 9500
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1_000_000 - 9500
