"""callback_url receives the payment's events: refused at creation when the service would
refuse to call it (the webhook address rules), instead of failing five deliveries later."""

from __future__ import annotations

import httpx
import pytest

from cauri.runtime import Runtime
from tests.support import assert_error, make_merchant, momo_body, scalar, with_settings
from tests.webhooks.builders import api_client


@pytest.mark.parametrize(
    "url",
    [
        "http://merchant.example/hooks",
        "https://127.0.0.1/hooks",
        "https://10.0.0.8/hooks",
        "https://169.254.169.254/latest",
        "https://user:pass@merchant.example/hooks",
    ],
)
async def test_unsafe_callback_url_is_refused_before_anything_is_written(
    runtime: Runtime, url: str
) -> None:
    strict = with_settings(runtime, webhook_allow_private=False)
    merchant = await make_merchant(runtime)
    async with api_client(strict) as client:
        response = await client.post(
            "/api/v1/payments", json=momo_body(callback_url=url), headers=merchant.headers()
        )
    error = assert_error(response, 422, "invalid_request")
    assert "callback_url" in error["details"]
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0


async def test_public_https_callback_url_is_accepted(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    strict = with_settings(runtime, webhook_allow_private=False)
    merchant = await make_merchant(runtime)
    async with api_client(strict) as strict_client:
        response = await strict_client.post(
            "/api/v1/payments",
            json=momo_body(callback_url="https://8.8.8.8/hooks"),
            headers=merchant.headers(),
        )
    assert response.status_code == 201, response.text
    assert response.json()["data"]["status"] == "succeeded"
