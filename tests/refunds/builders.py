"""Builders for the refunds tests: a paid Mobile Money payment, a refund request, reads."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support import MerchantKeys, momo_body

PAYMENTS = "/api/v1/payments"
REFUNDS = "/api/v1/refunds"


async def paid_payment(
    client: httpx.AsyncClient, merchant: MerchantKeys, live: bool = False, **body: Any
) -> dict[str, Any]:
    response = await client.post(PAYMENTS, json=momo_body(**body), headers=merchant.headers(live))
    assert response.status_code == 201, response.text
    payment: dict[str, Any] = response.json()["data"]
    return payment


async def ask_refund(
    client: httpx.AsyncClient, merchant: MerchantKeys, payment: str, live: bool = False, **body: Any
) -> httpx.Response:
    return await client.post(
        f"{PAYMENTS}/{payment}/refund", json=body or None, headers=merchant.headers(live)
    )


async def payment_of(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str
) -> dict[str, Any]:
    response = await client.get(f"{PAYMENTS}/{reference}", headers=merchant.headers())
    assert response.status_code == 200, response.text
    payment: dict[str, Any] = response.json()["data"]
    return payment


async def refund_of(
    client: httpx.AsyncClient, merchant: MerchantKeys, reference: str
) -> dict[str, Any]:
    response = await client.get(f"{REFUNDS}/{reference}", headers=merchant.headers())
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()["data"]
    return found
