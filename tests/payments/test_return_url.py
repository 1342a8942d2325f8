"""return_url in live mode is https only (issue 8); test mode keeps accepting http for the
developers' own pages. Payments and instalments alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from cauri.runtime import Runtime
from tests.foundation.builders import open_live_mode
from tests.payments.builders import PAYMENTS
from tests.plans.builders import PLANS, create_plan
from tests.support import assert_error, card_body, make_merchant, momo_body, scalar

INSECURE = ["http://merchant.example/return", "http://localhost:3000/merci"]


@pytest.mark.parametrize("return_url", INSECURE)
@pytest.mark.parametrize("body", [card_body, momo_body])
async def test_a_live_payment_refuses_an_http_return_url(
    client: httpx.AsyncClient,
    runtime: Runtime,
    return_url: str,
    body: Callable[..., dict[str, Any]],
) -> None:
    open_live_mode(runtime)
    open_live_mode(runtime, "VISA")
    merchant = await make_merchant(runtime)
    response = await client.post(
        PAYMENTS, json=body(return_url=return_url), headers=merchant.headers(livemode=True)
    )
    error = assert_error(response, 422, "invalid_request")
    assert "https://" in error["details"]["return_url"][0]
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0


async def test_a_live_payment_accepts_an_https_return_url(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    open_live_mode(runtime)
    merchant = await make_merchant(runtime)
    response = await client.post(
        PAYMENTS,
        json=momo_body(return_url="https://merchant.example/return"),
        headers=merchant.headers(livemode=True),
    )
    assert response.status_code == 201, response.text
    assert response.json()["data"]["livemode"] is True


@pytest.mark.parametrize("return_url", INSECURE)
async def test_a_test_payment_accepts_an_http_return_url(
    client: httpx.AsyncClient, runtime: Runtime, return_url: str
) -> None:
    merchant = await make_merchant(runtime)
    response = await client.post(
        PAYMENTS, json=card_body(return_url=return_url), headers=merchant.headers()
    )
    assert response.status_code == 201, response.text


async def test_a_live_instalment_refuses_an_http_return_url(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    open_live_mode(runtime)
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, livemode=True)
    live = merchant.headers(livemode=True)
    path = f"{PLANS}/{plan['reference']}/payments"
    refused = await client.post(
        path, json=momo_body(return_url="http://merchant.example/return"), headers=live
    )
    error = assert_error(refused, 422, "invalid_request")
    assert "return_url" in error["details"]
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0
    accepted = await client.post(
        path, json=momo_body(return_url="https://merchant.example/return"), headers=live
    )
    assert accepted.status_code == 201, accepted.text


async def test_a_test_instalment_accepts_an_http_return_url(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant)
    response = await client.post(
        f"{PLANS}/{plan['reference']}/payments",
        json=momo_body(return_url="http://localhost:3000/merci"),
        headers=merchant.headers(),
    )
    assert response.status_code == 201, response.text
