"""payment_url is built on CAURI_PUBLIC_URL; without it, only a server bound to loopback
builds it, from its own socket; never from the request's Host header (issue 8). Over real
HTTP: the Host header and the bound address are what is at stake."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from cauri.config import Settings
from cauri.runtime import Runtime
from tests.plans.builders import PLANS
from tests.support import (
    MerchantKeys,
    ServerThread,
    assert_error,
    card_body,
    make_merchant,
    momo_body,
    scalar,
)

PAYMENTS = "/api/v1/payments"
ATTACKER = {"Host": "attacker.example"}


def non_loopback_address() -> str | None:
    """This machine's address on its default route (no packet is sent), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address: str = probe.getsockname()[0]
    return None if address.startswith("127.") else address


@pytest.fixture
def served(
    settings: Settings, database_url: str, request: pytest.FixtureRequest
) -> Iterator[ServerThread]:
    """The app on a real socket; `request.param` is (bound host, CAURI_PUBLIC_URL)."""
    host, public = request.param
    if host is None:
        pytest.skip("this machine has no address besides loopback")
    changed = settings.model_copy(update={"public_url": public})
    with ServerThread(changed, database_url, host=host) as server:
        yield server


async def create(
    server: ServerThread, merchant: MerchantKeys, body: dict[str, object]
) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=15) as http:
        return await http.post(PAYMENTS, json=body, headers=merchant.headers() | ATTACKER)


@pytest.mark.parametrize(
    "served",
    [
        ("127.0.0.1", "https://pay.cauri.example"),
        (non_loopback_address(), "https://pay.cauri.example/"),
    ],
    indirect=True,
)
async def test_payment_url_is_on_the_public_url(served: ServerThread, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    response = await create(served, merchant, card_body())
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    assert payment["payment_url"] == f"https://pay.cauri.example/pay/{payment['reference']}"


@pytest.mark.parametrize("served", [("127.0.0.1", None)], indirect=True)
async def test_on_loopback_payment_url_is_the_bound_address_not_the_host_header(
    served: ServerThread, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    response = await create(served, merchant, card_body())
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    assert payment["payment_url"] == f"{served.base_url}/pay/{payment['reference']}"
    assert "attacker" not in response.text


@pytest.mark.parametrize("served", [(non_loopback_address(), None)], indirect=True)
async def test_off_loopback_without_public_url_no_card_payment_is_created(
    served: ServerThread, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    refused = await create(served, merchant, card_body())
    error = assert_error(refused, 500, "server_error")
    assert "CAURI_PUBLIC_URL" in error["message"]
    assert "attacker" not in refused.text
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0
    # Mobile Money has no page to send the customer to: it is not affected.
    paid = await create(served, merchant, momo_body())
    assert paid.status_code == 201, paid.text


@pytest.mark.parametrize("served", [("127.0.0.1", None)], indirect=True)
async def test_a_card_instalment_ignores_the_host_header(
    served: ServerThread, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    async with httpx.AsyncClient(base_url=served.base_url, timeout=15) as http:
        headers = merchant.headers() | ATTACKER
        plan = await http.post(PLANS, json={"target_amount": 10_000}, headers=headers)
        assert plan.status_code == 201, plan.text
        response = await http.post(
            f"{PLANS}/{plan.json()['data']['reference']}/payments",
            json=card_body(amount=2000),
            headers=headers,
        )
    assert response.status_code == 201, response.text
    payment = response.json()["data"]
    assert payment["payment_url"] == f"{served.base_url}/pay/{payment['reference']}"
