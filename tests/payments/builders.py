"""Builders for the payments and catalogue tests: contracts, platform fees, ledger reads and
a fake live operator (the only thing these tests fake: an operator's network)."""

from __future__ import annotations

import hmac
import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import text

from cauri.kit.db import unit_of_work
from cauri.ledger import accounts
from cauri.ledger.service import balance
from cauri.merchants.service import merchants
from cauri.operators.protocol import (
    CallbackUpdate,
    Collection,
    Disbursement,
    Notice,
    OperatorResult,
    Outcome,
    RefundSupport,
)
from cauri.platform.service import update_settings
from cauri.runtime import Runtime
from tests.support import scalar

PAYMENTS = "/api/v1/payments"
PAYMENT_MODES = "/api/v1/payment-modes"


async def set_fee(
    runtime: Runtime,
    merchant_id: str,
    operator: str,
    *,
    percent: str | None = None,
    fixed: int | str | None = None,
    currency: str = "XOF",
    disabled: bool = False,
) -> None:
    """`cauri merchants set-fee` as the CLI does it (amounts in major units of `currency`)."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_fee(
            session,
            merchant_id,
            mode=operator,
            percent=Decimal(percent) if percent is not None else None,
            fixed=Decimal(fixed) if fixed is not None else None,
            disabled=disabled,
            currency=currency,
        )


async def set_platform_fees(
    runtime: Runtime, *, percent: str, fixed: int | str = 0, currency: str = "XOF"
) -> None:
    """`cauri settings set --fee-percent P --fee-fixed N [--currency C]`."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await update_settings(
            session,
            {"fee_percent": Decimal(percent), "fee_fixed": Decimal(fixed)},
            runtime.clock.now(),
            currency=currency,
        )


async def count_rows(runtime: Runtime, table: str) -> int:
    return int(await scalar(runtime, f"SELECT count(*) FROM {table}"))  # noqa: S608 - test tables


async def merchant_available(
    runtime: Runtime, merchant_id: str, *, livemode: bool = False, currency: str = "XOF"
) -> int:
    async with runtime.sessionmaker() as session:
        return await balance(session, accounts.merchant_available(merchant_id, livemode, currency))


async def platform_fees(runtime: Runtime, *, livemode: bool = False, currency: str = "XOF") -> int:
    async with runtime.sessionmaker() as session:
        return await balance(session, accounts.platform("fees", livemode, currency))


async def events_of(runtime: Runtime, reference: str) -> list[tuple[str, dict[str, Any]]]:
    """(type, data) of the events about one payment, oldest first."""
    async with runtime.sessionmaker() as session:
        rows = await session.execute(
            text(
                "SELECT type, data FROM events WHERE data->>'reference' = :reference "
                "ORDER BY created_at, type"
            ),
            {"reference": reference},
        )
        return [(kind, data) for kind, data in rows]


async def pay(
    client: httpx.AsyncClient, headers: dict[str, str], body: dict[str, Any]
) -> httpx.Response:
    return await client.post(PAYMENTS, json=body, headers=headers)


CALLBACK_SECRET = "operator-shared-secret"


@dataclass
class FakeLiveOperator:
    """A live operator's network as seen through the adapter protocol: it gives every
    collection `outcome` at once, records what it was asked, and signs its notifications
    with a shared secret header (`{"reference": ..., "status": ...}` bodies)."""

    outcome: Outcome = Outcome.SUCCEEDED
    collections: list[Collection] = field(default_factory=list)
    decides_offline = False  # a network: engaged only once the payment is recorded
    refunds = RefundSupport.PARTIAL

    async def collect(self, collection: Collection) -> OperatorResult:
        self.collections.append(collection)
        return OperatorResult(self.outcome, operator_reference=f"op-{len(self.collections)}")

    async def collection_status(self, collection: Collection) -> OperatorResult:
        return OperatorResult(self.outcome)

    async def disburse(self, disbursement: Disbursement) -> OperatorResult:
        return OperatorResult(self.outcome)

    async def disbursement_status(self, disbursement: Disbursement) -> OperatorResult:
        return OperatorResult(self.outcome)

    async def parse_callback(self, notice: Notice) -> CallbackUpdate | None:
        if not hmac.compare_digest(notice.headers.get("x-operator-secret", ""), CALLBACK_SECRET):
            return None
        fields = json.loads(notice.body)
        return CallbackUpdate(fields["reference"], OperatorResult(Outcome(fields["status"])))
