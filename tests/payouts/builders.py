"""Builders for the payouts, balance and refunds tests: top-ups, limits, payout accounts as the
CLI sets them, and a fake live operator network (the only thing these tests fake)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import text

from cauri.audit.actor import Actor
from cauri.balance.service import credit
from cauri.kit.db import unit_of_work
from cauri.merchants.service import merchants
from cauri.operators.protocol import Disbursement, OperatorResult, Outcome
from cauri.operators.simulator import Simulator
from cauri.payouts.service import payouts
from cauri.runtime import Runtime

PAYOUTS = "/api/v1/payouts"
BALANCE = "/api/v1/balance"

# Beneficiary numbers by the simulator's last-four-digits rule (spec: Test mode for payouts).
SUCCEEDS = "22997000000"
REFUSED = "22997000001"
STAYS_PENDING = "22997000002"
FAILS_LATER = "22997000003"
SUCCEEDS_LATER = "22997001234"


def payout_body(**overrides: Any) -> dict[str, Any]:
    """A third-party payout to MTN Bénin, succeeded at once in test mode."""
    return {"amount": 1000, "phone_number": SUCCEEDS, "operator": "mtn"} | overrides


async def top_up(
    runtime: Runtime,
    merchant_id: str,
    amount: int,
    *,
    livemode: bool = False,
    currency: str = "XOF",
) -> None:
    """`cauri merchants credit`."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await credit(
            session,
            merchant_id,
            livemode=livemode,
            amount=Decimal(amount),
            currency=currency,
            reason="virement de test",
            now=runtime.clock.now(),
        )


async def set_limits(
    runtime: Runtime,
    merchant_id: str,
    *,
    per_payout: int | None = None,
    daily: int | None = None,
    approval_threshold: int | None = None,
) -> None:
    """`cauri merchants set-limits`."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_limits(
            session,
            merchant_id,
            per_payout=per_payout,
            daily=daily,
            approval_threshold=approval_threshold,
        )


async def set_payout_account(
    runtime: Runtime, merchant_id: str, number: str, *, operator: str = "mtn", validated: bool
) -> None:
    """`cauri merchants set-payout-account`."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_payout_account(
            session, merchant_id, phone_number=number, operator=operator, validated=validated
        )


FINANCE = Actor("cli", "cli:finance")


async def approve(runtime: Runtime, reference: str, approver: Actor = FINANCE) -> None:
    """`cauri payouts approve`, in process (the subprocess flow is tested on its own)."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await payouts.approve(session, runtime, reference, approver)


async def reject(runtime: Runtime, reference: str) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        await payouts.reject(session, runtime, reference)


async def create(
    client: httpx.AsyncClient, headers: dict[str, str], **overrides: Any
) -> httpx.Response:
    return await client.post(PAYOUTS, json=payout_body(**overrides), headers=headers)


async def ledger_postings_for(runtime: Runtime, reference: str) -> int:
    """How many postings the ledger holds for one payout or refund."""
    async with runtime.sessionmaker() as session:
        count = await session.scalar(
            text(
                "SELECT count(*) FROM ledger_postings p JOIN ledger_transactions t "
                "ON t.id = p.transaction_id WHERE t.reference = :reference"
            ),
            {"reference": reference},
        )
    return int(count or 0)


class FakeLiveOperator(Simulator):
    """A live operator's network as seen through the adapter protocol: it answers by the
    last-four-digits rule (or refuses every disbursement, refunds included) and records the
    disbursements it was asked to make."""

    def __init__(self, *, refuse_disbursements: bool = False) -> None:
        super().__init__(settle_delay=10.0)
        self.refuse_disbursements = refuse_disbursements
        self.disbursed: list[Disbursement] = []

    async def disburse(self, disbursement: Disbursement) -> OperatorResult:
        self.disbursed.append(disbursement)
        if self.refuse_disbursements:
            return OperatorResult(Outcome.FAILED, reason="beneficiary_unknown")
        return await super().disburse(disbursement)

    async def refund(self, disbursement: Disbursement) -> OperatorResult:
        return await self.disburse(disbursement)


def live_operator(
    runtime: Runtime, operator: str = "mtn", *, refuse_disbursements: bool = False
) -> FakeLiveOperator:
    """Opens `operator` in live mode on this runtime, through a fake network."""
    fake = FakeLiveOperator(refuse_disbursements=refuse_disbursements)
    runtime.operators.live_adapters[operator] = fake
    return fake
