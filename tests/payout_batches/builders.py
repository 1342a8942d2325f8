"""Builders for the payout batches tests."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import text

from cauri.runtime import Runtime
from tests.payouts.builders import SUCCEEDS, payout_body

BATCHES = "/api/v1/payout-batches"


def item(number: int, **overrides: Any) -> dict[str, Any]:
    """A third-party payout of 1,000 to MTN Bénin (succeeded at once in test mode), with an
    external_id of its own."""
    return payout_body(phone_number=SUCCEEDS, external_id=f"item-{number}") | overrides


async def send(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    items: list[Any],
    external_id: str = "batch-1",
) -> httpx.Response:
    return await client.post(
        BATCHES, json={"external_id": external_id, "items": items}, headers=headers
    )


async def read(
    client: httpx.AsyncClient, headers: dict[str, str], reference: str
) -> dict[str, Any]:
    response = await client.get(f"{BATCHES}/{reference}", headers=headers)
    assert response.status_code == 200, response.text
    batch: dict[str, Any] = response.json()["data"]
    return batch


async def batch_events(runtime: Runtime, reference: str) -> list[dict[str, Any]]:
    """The data of each `payout_batch.completed` event about the batch."""
    async with runtime.sessionmaker() as session:
        rows = await session.execute(
            text(
                "SELECT data FROM events WHERE type = 'payout_batch.completed' "
                "AND data->>'reference' = :reference ORDER BY created_at"
            ),
            {"reference": reference},
        )
        return [data for (data,) in rows]


async def payouts_of(runtime: Runtime, merchant_id: str) -> list[tuple[str | None, str]]:
    """(external_id, status) of every payout of the merchant."""
    async with runtime.sessionmaker() as session:
        rows = await session.execute(
            text(
                "SELECT external_id, status FROM payouts WHERE merchant_id = :m ORDER BY created_at"
            ),
            {"m": merchant_id},
        )
        return [(external_id, status) for external_id, status in rows]
