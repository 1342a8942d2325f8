"""Builders of the hosted page's tests."""

from __future__ import annotations

from typing import Any

import httpx

from cauri.runtime import Runtime
from tests.support import MerchantKeys, card_body, scalar


async def create_card_payment(
    http: httpx.AsyncClient, merchant: MerchantKeys, **overrides: Any
) -> dict[str, Any]:
    response = await http.post(
        "/api/v1/payments", json=card_body(**overrides), headers=merchant.headers()
    )
    assert response.status_code == 201, response.text
    payment: dict[str, Any] = response.json()["data"]
    assert payment["status"] == "pending"
    return payment


async def events_of(runtime: Runtime, reference: str) -> list[str]:
    """The types of the events emitted about one payment, oldest first."""
    types = await scalar(
        runtime,
        "SELECT coalesce(array_agg(type ORDER BY created_at), '{}') FROM events "
        "WHERE data->>'reference' = :reference",
        reference=reference,
    )
    return list(types)


async def ledger_transactions_of(runtime: Runtime, reference: str) -> int:
    return int(
        await scalar(
            runtime,
            "SELECT count(*) FROM ledger_transactions WHERE reference = :reference",
            reference=reference,
        )
    )
