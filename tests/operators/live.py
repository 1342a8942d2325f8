"""Live mode wired to an operator's contract fake, as the staff would wire it to the
operator's sandbox: a connector account and routes, with Cauri's callback route served over
real HTTP for the fake to call back. What every connector's end-to-end tests share."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx
from sqlalchemy import text

from cauri.connectors.service import AccountDefinition, connectors
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.payouts.builders import PAYOUTS
from tests.plans.builders import PLANS
from tests.support import MerchantKeys, scalar

ALL_ACTIONS = ("collect", "disburse", "refund")


async def connect(
    runtime: Runtime,
    *,
    name: str,
    kind: str,
    base_url: str,
    settings: Mapping[str, str],
    secrets: Mapping[str, str],
    operators: Iterable[str],
    environment: str = "sandbox",
    actions: Iterable[str] = ALL_ACTIONS,
) -> None:
    """`cauri connectors add` and `cauri routes set` for each operator, in process."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await connectors.add(
            session,
            AccountDefinition(name, kind, environment, base_url, dict(settings), dict(secrets)),
            secret_key=runtime.settings.secret_key,
            now=runtime.clock.now(),
        )
        for operator in operators:
            await connectors.set_routes(
                session, operator, dict.fromkeys(actions, name), runtime.clock.now()
            )


async def callbacks_received(runtime: Runtime, count: int = 1) -> None:
    """Waits until the callback server recorded `count` notices (the fake sends them from
    its own thread, and retries a refused or lost one after 1, 2, 4… s: on a loaded machine
    15 s were once not enough), then lets the hint's status query fall due for the test's
    clock: the callback server queued it at its own time, the real one, which is ahead of
    the test's by however long the test has run (once more than 5 s on a loaded CI)."""
    async with asyncio.timeout(60):
        # Another thread writes the rows: no Event can carry that.
        while await callback_count(runtime) < count:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    behind = (datetime.now(UTC) - runtime.clock.now()).total_seconds()
    runtime.clock.advance(max(behind, 0) + 5)  # type: ignore[attr-defined]


async def callback_count(runtime: Runtime) -> int:
    sql = "SELECT count(*) FROM operator_exchanges WHERE action = 'callback'"
    return int(await scalar(runtime, sql))


async def run(runtime: Runtime, worker: Worker, seconds: float = 0) -> None:
    runtime.clock.advance(seconds)  # type: ignore[attr-defined]
    await worker.drain()


async def read(client: httpx.AsyncClient, merchant: MerchantKeys, path: str) -> dict[str, Any]:
    response = await client.get(f"/api/v1/{path}", headers=merchant.headers(livemode=True))
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def event_types(runtime: Runtime, reference: str) -> list[str]:
    async with runtime.sessionmaker() as session:
        rows = await session.scalars(
            text("SELECT type FROM events WHERE data->>'reference' = :r ORDER BY created_at"),
            {"r": reference},
        )
        return list(rows)


# What a merchant does with a live key, each asserted to be accepted.


async def status_of(client: httpx.AsyncClient, merchant: MerchantKeys, path: str) -> str:
    return str((await read(client, merchant, path))["status"])


async def _post(
    client: httpx.AsyncClient,
    merchant: MerchantKeys,
    path: str,
    body: dict[str, Any] | None,
    expected: int = 201,
) -> dict[str, Any]:
    response = await client.post(path, json=body, headers=merchant.headers(livemode=True))
    assert response.status_code == expected, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def send_payout(
    client: httpx.AsyncClient, merchant: MerchantKeys, body: dict[str, Any]
) -> dict[str, Any]:
    return await _post(client, merchant, PAYOUTS, body)


async def refund_payment(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str
) -> dict[str, Any]:
    return await _post(client, merchant, f"/api/v1/payments/{reference}/refund", None)


async def open_plan(client: httpx.AsyncClient, merchant: MerchantKeys, target: int) -> str:
    plan = await _post(client, merchant, PLANS, {"target_amount": target})
    return str(plan["reference"])


async def pay_instalment(
    client: httpx.AsyncClient, merchant: MerchantKeys, plan: str, body: dict[str, Any]
) -> dict[str, Any]:
    return await _post(client, merchant, f"{PLANS}/{plan}/payments", body)


async def cancel_plan(client: httpx.AsyncClient, merchant: MerchantKeys, plan: str) -> None:
    await _post(client, merchant, f"{PLANS}/{plan}/cancel", {}, expected=200)
