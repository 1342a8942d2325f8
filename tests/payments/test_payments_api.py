from __future__ import annotations

import httpx

from cauri.runtime import Runtime
from tests.support import assert_error, make_merchant, momo_body


async def test_immediate_success_is_credited(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    response = await client.post("/api/v1/payments", json=momo_body(), headers=merchant.headers())
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    assert payment["status"] == "succeeded"
    assert payment["livemode"] is False
    fetched = await client.get(
        f"/api/v1/payments/{payment['reference']}", headers=merchant.headers()
    )
    assert fetched.json()["data"]["status"] == "succeeded"


async def test_refused_at_initiation_is_recorded_failed(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.post(
        "/api/v1/payments",
        json=momo_body(phone_number="22997000001", external_id="order-1"),
        headers=merchant.headers(),
    )
    assert_error(response, 402, "payment_failed")
    fetched = await client.get("/api/v1/payments/order-1", headers=merchant.headers())
    assert fetched.json()["data"]["status"] == "failed"
