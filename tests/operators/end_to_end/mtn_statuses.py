"""A live payment to MTN's fake whose callbacks are lost, settled by a status query (the
reconciliation tests' first step)."""

from __future__ import annotations

import httpx
from sqlalchemy import text

from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.operators.live import run, status_of
from tests.operators.mtn_live import NUMBER
from tests.payments.builders import pay
from tests.support import MerchantKeys, momo_body


async def paid(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, merchant: MerchantKeys
) -> tuple[str, str]:
    """A live payment to MTN, succeeded: its reference and its operation's id."""
    response = await pay(client, merchant.headers(livemode=True), momo_body(phone_number=NUMBER))
    reference = response.json()["data"]["reference"]
    await run(runtime, worker, 30)
    assert await status_of(client, merchant, f"payments/{reference}") == "succeeded"
    async with runtime.engine.connect() as connection:
        operation = await connection.scalar(
            text("SELECT id FROM operator_operations WHERE subject_ref = :r"), {"r": reference}
        )
    return reference, str(operation)
