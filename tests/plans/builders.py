"""Builders for the installment plan tests: platform settings, API calls, ledger reads and the
plan-level reconciliation check."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import text

from cauri.kit.db import unit_of_work
from cauri.ledger import accounts
from cauri.ledger.service import balance
from cauri.platform.service import update_settings
from cauri.runtime import Runtime
from tests.support import MerchantKeys, make_merchant, momo_body, scalar

PLANS = "/api/v1/installment-plans"
SETTLE_DELAY = 10  # CAURI_TEST_SETTLE_DELAY's default


async def set_plan_settings(runtime: Runtime, **changes: Any) -> None:
    """`cauri settings set --plan-…` as the CLI does it (percentages as strings)."""
    values = {
        key: Decimal(value) if isinstance(value, str) else value for key, value in changes.items()
    }
    async with unit_of_work(runtime.sessionmaker) as session:
        await update_settings(session, values, runtime.clock.now())


async def create_plan(
    client: httpx.AsyncClient, merchant: MerchantKeys, *, livemode: bool = False, **body: Any
) -> dict[str, Any]:
    response = await client.post(
        PLANS, json={"target_amount": 10_000} | body, headers=merchant.headers(livemode)
    )
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def penalised_plan(client: httpx.AsyncClient, runtime: Runtime) -> tuple[MerchantKeys, str]:
    """A new merchant's plan of 10,000 XOF whose cancellation keeps a 10 % penalty."""
    merchant = await make_merchant(runtime)
    await set_plan_settings(runtime, plan_penalty_percent="10")
    plan = await create_plan(client, merchant, target_amount=10_000)
    return merchant, plan["reference"]


async def pay(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str, **body: Any
) -> httpx.Response:
    """An instalment by Mobile Money (MTN Bénin, ending 0000: succeeds at once)."""
    return await client.post(
        f"{PLANS}/{reference}/payments", json=momo_body(**body), headers=merchant.headers()
    )


async def force_success(client: httpx.AsyncClient, merchant: MerchantKeys, payment: str) -> None:
    """The test helper: a pending test payment succeeds now (the customer validated it)."""
    response = await client.post(
        f"/api/v1/test-helpers/payments/{payment}/succeed", headers=merchant.headers()
    )
    assert response.status_code == 200, response.text


async def paid_instalment(
    client: httpx.AsyncClient, merchant: MerchantKeys, plan: str, number: str, amount: int
) -> str:
    """A succeeded instalment from `number`, whatever its last four digits' collection rule."""
    response = await pay(client, merchant, plan, amount=amount, phone_number=number)
    assert response.status_code == 201, response.text
    payment: dict[str, Any] = response.json()["data"]
    if payment["status"] == "pending":
        await force_success(client, merchant, payment["reference"])
    return str(payment["reference"])


async def cancel(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str, reason: str | None = None
) -> httpx.Response:
    body = {"reason": reason} if reason is not None else {}
    return await client.post(f"{PLANS}/{reference}/cancel", json=body, headers=merchant.headers())


async def expire(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str, *, livemode: bool = False
) -> httpx.Response:
    return await client.post(
        f"/api/v1/test-helpers/installment-plans/{reference}/expire",
        headers=merchant.headers(livemode),
    )


async def fetch(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str
) -> dict[str, Any]:
    response = await client.get(f"{PLANS}/{reference}", headers=merchant.headers())
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def escrow(
    runtime: Runtime, merchant_id: str, plan_reference: str, currency: str = "XOF"
) -> int:
    async with runtime.sessionmaker() as session:
        return await balance(
            session, accounts.plan_escrow(merchant_id, plan_reference, False, currency)
        )


async def available(runtime: Runtime, merchant_id: str, currency: str = "XOF") -> int:
    async with runtime.sessionmaker() as session:
        return await balance(session, accounts.merchant_available(merchant_id, False, currency))


async def platform(runtime: Runtime, kind: str, currency: str = "XOF") -> int:
    """A platform revenue account: `fees`, `plan_fees` or `penalties` (test environment)."""
    async with runtime.sessionmaker() as session:
        return await balance(session, accounts.platform(kind, False, currency))


async def count(runtime: Runtime, sql: str, **params: Any) -> int:
    return int(await scalar(runtime, sql, **params))


_PLAN_MONEY = text(
    # Money inside Cauri: not at the operators (their clearing accounts, connectors' wallets).
    "SELECT coalesce(sum(p.amount) FILTER (WHERE p.account NOT LIKE 'operator:%' "
    "                                      AND p.account NOT LIKE 'connector:%'), 0), "
    "       coalesce(sum(p.amount) "
    "                FILTER (WHERE p.account LIKE '%:plan:' || :plan || ':escrow:%'), 0), "
    "       coalesce(sum(p.amount) FILTER (WHERE t.kind = 'plan_release' AND p.amount > 0), 0), "
    "       coalesce(sum(p.amount) FILTER (WHERE p.account LIKE 'merchant:%:available:%'), 0), "
    "       coalesce(sum(p.amount) FILTER (WHERE p.account LIKE 'platform:plan_fees:%'), 0), "
    "       coalesce(sum(p.amount) FILTER (WHERE p.account LIKE 'platform:penalties:%'), 0), "
    "       coalesce(sum(p.amount) FILTER (WHERE t.kind IN ('plan_refund', 'plan_refund_reversal') "
    "                                      AND p.account LIKE 'operator:%'), 0), "
    "       coalesce(sum(p.amount) FILTER (WHERE t.kind IN ('refund', 'refund_reversal') "
    "                                      AND p.account LIKE 'operator:%'), 0) "
    "FROM ledger_postings p JOIN ledger_transactions t ON t.id = p.transaction_id "
    "WHERE t.reference = :plan "
    "   OR t.reference IN "
    "      (SELECT CAST(id AS text) FROM payments WHERE CAST(plan_id AS text) = :plan) "
    "   OR t.reference IN (SELECT reference FROM refunds WHERE CAST(plan_id AS text) = :plan) "
    "   OR t.reference IN (SELECT reference FROM plan_refunds WHERE CAST(plan_id AS text) = :plan)"
)
# What the plan's refund rows say is out of the escrow: the ledger must agree.
_REFUND_DEBITED = text(
    "SELECT coalesce(sum(amount) FILTER (WHERE debited), 0) FROM plan_refunds "
    "WHERE CAST(plan_id AS text) = :plan"
)
# A refunded instalment is one that succeeded late, then was paid back (from the escrow).
_DEBITED_TOTAL = text(
    "SELECT coalesce(sum(amount + fee_amount), 0) FROM payments "
    "WHERE CAST(plan_id AS text) = :plan AND status IN ('succeeded', 'refunded')"
)
_PLAN_ROW = text(
    "SELECT status, paid_amount, target_amount, creation_fee_amount, creation_fee_paid, "
    "       coalesce(penalty_amount, 0), coalesce(refund_amount, 0), resolution "
    "FROM installment_plans WHERE CAST(id AS text) = :plan"
)


async def assert_plan_reconciles(runtime: Runtime, plan_reference: str, *, held: int = 0) -> None:
    """The plan's money, from the ledger alone: escrow + merchant balance + platform accounts
    hold what its instalments debited, minus what was sent back (the cancellation's refund,
    late instalments' refunds); and each account holds what the plan's state says it should
    (the cancellation's refund is out of the escrow exactly while its row is debited).
    `held`: what late instalments left in the escrow for support (a card, a failed refund)."""
    async with runtime.sessionmaker() as session:
        params = {"plan": plan_reference}
        kept, in_escrow, released, merchant, plan_fees, penalties, refunded, late_refunded = (
            await session.execute(_PLAN_MONEY, params)
        ).one()
        debited = (await session.execute(_DEBITED_TOTAL, params)).scalar_one()
        refund_debited = (await session.execute(_REFUND_DEBITED, params)).scalar_one()
        status, paid, target, fee, fee_paid, penalty, refund, resolution = (
            await session.execute(_PLAN_ROW, params)
        ).one()
    assert kept == debited - refunded - late_refunded, (kept, debited, refunded, late_refunded)
    assert plan_fees == (fee if fee_paid else 0)
    assert penalties == penalty
    if resolution == "released_to_merchant":  # the staff's: all the escrow held, once
        assert in_escrow == 0 and released == paid - penalties - refunded + held
    else:
        assert released == (target if status == "succeeded" else 0)
    assert merchant == released  # a late instalment never reaches the merchant's balance
    # The plan's refund is out of the escrow from when it is sent until it fails (then the
    # reversal puts it back), and the ledger says what its row says.
    assert refunded == refund_debited
    assert refunded in (0, refund)
    if status == "refunded":
        assert refunded == refund
    assert in_escrow == paid - released - penalties - refunded + held, (in_escrow, held)
    assert 0 <= paid <= target
