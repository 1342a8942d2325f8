"""Many simultaneous payments for one merchant (invariant 3: credits append, nothing lost)."""

from __future__ import annotations

import asyncio

import httpx

from cauri.runtime import Runtime
from tests.payments.builders import (
    count_rows,
    merchant_available,
    pay,
    platform_fees,
    set_fee,
)
from tests.support import make_merchant, momo_body, scalar


async def test_200_simultaneous_payments_are_all_credited(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await set_fee(runtime, merchant.id, "mtn", percent="1.5", fixed=1)
    amounts = [100 + 37 * i for i in range(200)]
    responses = await asyncio.gather(
        *(pay(client, merchant.headers(), momo_body(amount=amount)) for amount in amounts)
    )
    assert [r.status_code for r in responses] == [201] * 200
    payments = [r.json()["data"] for r in responses]
    assert all(p["status"] == "succeeded" for p in payments)
    assert sorted(p["amount"] for p in payments) == sorted(amounts)
    assert len({p["reference"] for p in payments}) == 200
    assert len({p["identifier"] for p in payments}) == 200

    assert await merchant_available(runtime, merchant.id) == sum(amounts)
    assert await platform_fees(runtime) == sum(p["fee_amount"] for p in payments)
    # One ledger transaction and one event per payment: none lost, none doubled.
    assert await count_rows(runtime, "payments") == 200
    assert await count_rows(runtime, "ledger_transactions") == 200
    assert await count_rows(runtime, "events") == 200
    # Credits append postings and update no cached balance (no hot row on the payment path).
    assert await scalar(runtime, "SELECT count(*) FROM ledger_accounts WHERE balance <> 0") == 0


async def test_simultaneous_payments_of_two_merchants_stay_apart(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    first = await make_merchant(runtime)
    second = await make_merchant(runtime, name="Autre")
    responses = await asyncio.gather(
        *(
            pay(client, (first if i % 2 else second).headers(), momo_body(amount=1000 + i % 2))
            for i in range(100)
        )
    )
    assert {r.status_code for r in responses} == {201}
    assert await merchant_available(runtime, first.id) == 50 * 1001
    assert await merchant_available(runtime, second.id) == 50 * 1000
