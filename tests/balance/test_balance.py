"""GET /balance (DESIGN: Balance): per currency, available, escrowed, pending_payouts, in the
key's environment, computed from the ledger; top-ups by `cauri merchants credit`."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest

from cauri.balance.service import credit
from cauri.kit.db import unit_of_work
from cauri.kit.errors import InvalidRequest, NotFound
from cauri.ledger import accounts
from cauri.ledger.service import Entry, transfer
from cauri.merchants.service import merchants
from cauri.models import Merchant
from cauri.runtime import Runtime
from tests.payouts.builders import BALANCE, STAYS_PENDING, create, top_up
from tests.support import MerchantKeys, make_merchant


async def _escrow(
    runtime: Runtime, merchant_id: str, plan: str, amount: int, *, livemode: bool = False
) -> None:
    """An instalment held in a plan's escrow, as the plans domain books it."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await transfer(
            session,
            kind="instalment",
            reference=plan,
            entries=[
                Entry(accounts.operator_clearing("mtn", livemode, "XOF"), -amount),
                Entry(accounts.plan_escrow(merchant_id, plan, livemode, "XOF"), amount),
            ],
            at=runtime.clock.now(),
        )


async def _release(runtime: Runtime, merchant_id: str, plan: str, amount: int) -> None:
    """Part of an escrow moved to the balance: a debit, which folds the escrow's head."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await transfer(
            session,
            kind="plan_release",
            reference=plan,
            entries=[
                Entry(accounts.plan_escrow(merchant_id, plan, False, "XOF"), -amount),
                Entry(accounts.merchant_available(merchant_id, False, "XOF"), amount),
            ],
            at=runtime.clock.now(),
        )


async def _balance(client: httpx.AsyncClient, merchant: MerchantKeys, live: bool = False) -> Any:
    response = await client.get(BALANCE, headers=merchant.headers(live))
    assert response.status_code == 200, response.text
    assert response.json()["success"] is True
    return response.json()["data"]


async def test_a_new_account_has_an_empty_xof_row(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    empty = {"currency": "XOF", "available": 0, "escrowed": 0, "pending_payouts": 0}
    assert await _balance(client, merchant) == [empty | {"livemode": False}]
    assert await _balance(client, merchant, live=True) == [empty | {"livemode": True}]


async def test_available_escrowed_and_pending_payouts(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    await top_up(runtime, merchant.id, 10_000)
    await create(client, merchant.headers(), amount=1000)
    await create(client, merchant.headers(), amount=2500, phone_number=STAYS_PENDING)
    await _escrow(runtime, merchant.id, "plan-a", 3000)
    await _escrow(runtime, merchant.id, "plan-b", 700)
    await _release(runtime, merchant.id, "plan-a", 1000)
    # Neither another merchant's escrow nor this merchant's live escrow is counted.
    await _escrow(runtime, other.id, "plan-c", 5000)
    await _escrow(runtime, merchant.id, "plan-d", 4000, livemode=True)

    assert await _balance(client, merchant) == [
        {
            "currency": "XOF",
            "available": 10_000 - 1000 - 2500 + 1000,
            "escrowed": 3000 - 1000 + 700,
            "pending_payouts": 2500,
            "livemode": False,
        }
    ]
    [live] = await _balance(client, merchant, live=True)
    assert (live["available"], live["escrowed"]) == (0, 4000)


async def test_one_row_per_currency_held(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    async with unit_of_work(runtime.sessionmaker) as session:
        await credit(
            session,
            merchant.id,
            livemode=False,
            amount=Decimal("12.34"),
            currency="EUR",
            reason="virement SEPA",
            now=runtime.clock.now(),
        )
    rows = await _balance(client, merchant)
    assert [(r["currency"], r["available"]) for r in rows] == [("EUR", 12.34), ("XOF", 0)]


async def test_merchant_ids_are_matched_literally(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """`_` is a LIKE wildcard: mer_x must not sum the escrow of merXx."""
    async with unit_of_work(runtime.sessionmaker) as session:
        for merchant_id in ("mer_lit", "merXlit"):
            session.add(
                Merchant(
                    id=merchant_id,
                    name=merchant_id,
                    status="active",
                    created_at=runtime.clock.now(),
                )
            )
        await session.flush()
        key = await merchants.create_key(
            session, "mer_lit", livemode=False, now=runtime.clock.now()
        )
    await _escrow(runtime, "merXlit", "plan-x", 900)
    response = await client.get(BALANCE, headers={"Authorization": f"Bearer {key}"})
    assert response.json()["data"][0]["escrowed"] == 0


async def test_credit_is_a_ledger_top_up(runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    async with unit_of_work(runtime.sessionmaker) as session:
        available = await credit(
            session,
            merchant.id,
            livemode=True,
            amount=Decimal(2500),
            currency="XOF",
            reason="virement 42",
            now=runtime.clock.now(),
        )
    assert available == 2500
    for amount, currency in ((Decimal(0), "XOF"), (Decimal("1.5"), "XOF"), (Decimal(1), "GBP")):
        with pytest.raises(InvalidRequest):
            async with unit_of_work(runtime.sessionmaker) as session:
                await credit(
                    session,
                    merchant.id,
                    livemode=False,
                    amount=amount,
                    currency=currency,
                    reason="x",
                    now=runtime.clock.now(),
                )
    with pytest.raises(NotFound):
        async with unit_of_work(runtime.sessionmaker) as session:
            await credit(
                session,
                "mer_nobody",
                livemode=False,
                amount=Decimal(1),
                currency="XOF",
                reason="x",
                now=runtime.clock.now(),
            )
