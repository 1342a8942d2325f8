"""Live mode wired to MTN's contract fake, as the staff would wire it to MTN's sandbox: a
connector account of kind `mtn_momo` (sandbox, EUR) and routes for mtn's three operations,
with Cauri's callback route served over real HTTP for the fake to call back."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from sqlalchemy import text

from cauri.connectors.service import connectors
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.fakes.mtn_momo import MtnMomoFake
from tests.support import MerchantKeys, scalar

CONNECTOR = "mtn-sandbox"
API_USER = "5f1c4a2e-8d3b-4c6a-9e7f-0a1b2c3d4e5f"
API_KEY = "mtn-api-key-of-the-sandbox-user"
SUBSCRIPTION_KEYS = {"collection": "collection-primary-key", "disbursement": "disb-primary-key"}
SECRETS = {
    "api_user": API_USER,
    "api_key": API_KEY,
    "collection_subscription_key": SUBSCRIPTION_KEYS["collection"],
    "disbursement_subscription_key": SUBSCRIPTION_KEYS["disbursement"],
}
NUMBER = "22997123456"


def mtn_fake() -> MtnMomoFake:
    return MtnMomoFake(api_user=API_USER, api_key=API_KEY, subscription_keys=SUBSCRIPTION_KEYS)


async def wire(runtime: Runtime, fake: MtnMomoFake, operator: str = "mtn") -> None:
    """`cauri connectors add … --kind mtn_momo` and `cauri routes set`, in process."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await connectors.add(
            session,
            name=CONNECTOR,
            kind="mtn_momo",
            environment="sandbox",
            base_url=fake.base_url,
            settings={"target_environment": "sandbox", "currency": "EUR"},
            secrets=SECRETS,
            secret_key=runtime.settings.secret_key,
            now=runtime.clock.now(),
        )
        await connectors.set_routes(
            session,
            operator,
            {"collect": CONNECTOR, "disburse": CONNECTOR, "refund": CONNECTOR},
            runtime.clock.now(),
        )


async def callbacks_received(runtime: Runtime, count: int = 1) -> None:
    """Waits until the callback server recorded `count` notices (the fake sends them from
    its own thread), then lets the hint's status query fall due for the test's clock."""
    async with asyncio.timeout(15):
        # Another thread writes the rows: no Event can carry that.
        while await callback_count(runtime) < count:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    runtime.clock.advance(5)  # type: ignore[attr-defined]


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
