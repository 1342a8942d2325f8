"""PUT/GET /webhooks/endpoint: one URL and one secret per merchant and environment."""

from __future__ import annotations

import httpx
import pytest

from cauri.runtime import Runtime
from tests.support import assert_error, make_merchant, with_settings
from tests.webhooks.builders import ENDPOINT, api_client, set_endpoint


async def get_endpoint(client: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, str | None]:
    response = await client.get(ENDPOINT, headers=headers)
    assert response.status_code == 200, response.text
    data: dict[str, str | None] = response.json()["data"]
    return data


async def test_a_new_merchant_has_a_secret_and_no_url(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    test = await get_endpoint(client, merchant.headers())
    live = await get_endpoint(client, merchant.headers(livemode=True))
    assert test["url"] is None and live["url"] is None
    for config in (test, live):
        secret = config["secret"]
        assert secret is not None and secret.startswith("whsec_") and len(secret) == 6 + 32
    assert test["secret"] != live["secret"]


async def test_set_read_rotate_and_disable(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    original = (await get_endpoint(client, merchant.headers()))["secret"]

    configured = await set_endpoint(client, merchant, "https://hooks.example.com/cauri")
    assert configured == {"url": "https://hooks.example.com/cauri", "secret": original}
    assert await get_endpoint(client, merchant.headers()) == configured

    # rotate_secret alone keeps the URL.
    response = await client.put(ENDPOINT, json={"rotate_secret": True}, headers=merchant.headers())
    rotated = response.json()["data"]
    assert rotated["url"] == "https://hooks.example.com/cauri"
    assert rotated["secret"] != original and rotated["secret"].startswith("whsec_")
    assert await get_endpoint(client, merchant.headers()) == rotated

    disabled = await set_endpoint(client, merchant, None)
    assert disabled == {"url": None, "secret": rotated["secret"]}


async def test_a_test_key_configures_only_the_test_endpoint(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    live_before = await get_endpoint(client, merchant.headers(livemode=True))
    await set_endpoint(client, merchant, "https://test.example.com/hooks", rotate=True)
    assert await get_endpoint(client, merchant.headers(livemode=True)) == live_before

    await set_endpoint(client, merchant, "https://live.example.com/hooks", livemode=True)
    assert (await get_endpoint(client, merchant.headers()))["url"] == (
        "https://test.example.com/hooks"
    )


async def test_merchants_do_not_share_endpoints(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    first = await make_merchant(runtime)
    second = await make_merchant(runtime, name="Autre")
    await set_endpoint(client, first, "https://first.example.com/hooks")
    other = await get_endpoint(client, second.headers())
    assert other["url"] is None
    assert other["secret"] != (await get_endpoint(client, first.headers()))["secret"]


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/cauri",
        "ftp://hooks.example.com/cauri",
        "https://user:password@hooks.example.com/cauri",
        "https://127.0.0.1/hooks",
        "https://10.1.2.3/hooks",
        "https://192.168.1.10/hooks",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hooks",
        "https://[::ffff:127.0.0.1]/hooks",
        "https://0.0.0.0/hooks",
        "https://localhost/hooks",
        "https://api.localhost/hooks",
        "https://hooks.example.com/" + "a" * 2100,
        "not a url",
        "",
    ],
)
async def test_unsafe_urls_are_refused(
    client: httpx.AsyncClient, runtime: Runtime, url: str
) -> None:
    strict = with_settings(runtime, webhook_allow_private=False)
    merchant = await make_merchant(runtime)
    async with api_client(strict) as strict_client:
        response = await strict_client.put(ENDPOINT, json={"url": url}, headers=merchant.headers())
        error = assert_error(response, 422, "invalid_request")
        assert "url" in error["details"]
        assert (await get_endpoint(strict_client, merchant.headers()))["url"] is None


async def test_public_https_url_accepted_when_strict(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    strict = with_settings(runtime, webhook_allow_private=False)
    merchant = await make_merchant(runtime)
    async with api_client(strict) as strict_client:
        configured = await set_endpoint(strict_client, merchant, "https://8.8.8.8/hooks")
    assert configured["url"] == "https://8.8.8.8/hooks"


async def test_http_and_loopback_allowed_in_development(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    assert runtime.settings.webhook_allow_private
    merchant = await make_merchant(runtime)
    configured = await set_endpoint(client, merchant, "http://127.0.0.1:9/hooks")
    assert configured["url"] == "http://127.0.0.1:9/hooks"


async def test_endpoint_requires_a_key(client: httpx.AsyncClient, runtime: Runtime) -> None:
    assert_error(await client.get(ENDPOINT), 401, "unauthorized")
    assert_error(await client.put(ENDPOINT, json={"url": None}), 401, "unauthorized")
    merchant = await make_merchant(runtime)
    response = await client.put(ENDPOINT, json={"url": 42}, headers=merchant.headers())
    assert_error(response, 422, "invalid_request")
