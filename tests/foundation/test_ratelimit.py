"""Spec: Limits (request rate): 120 requests per minute per client IP, then 429
`rate_limited` with Retry-After; shared through Redis; X-Forwarded-For from trusted proxies."""

from __future__ import annotations

import ipaddress
import os
import uuid

import httpx
import pytest
from limits import parse

from cauri.config import Settings
from cauri.kit import ratelimit
from cauri.kit.ratelimit import Count, LocalWindows, budget_key, client_ip, trusted_networks
from cauri.runtime import Runtime
from tests.foundation.builders import API, app_with, client_of
from tests.support import assert_error, make_merchant

REDIS_URL = os.environ.get("CAURI_TEST_REDIS_URL")
needs_redis = pytest.mark.skipif(not REDIS_URL, reason="CAURI_TEST_REDIS_URL is not set")


def fresh_ip() -> str:
    """A client address no other test (or parallel run on the same Redis) uses."""
    return str(ipaddress.IPv6Address("2001:db8::") + uuid.uuid4().int % 2**96)


def from_ip(ip: str) -> dict[str, str]:
    return {"X-Forwarded-For": ip}


def assert_limited(response: httpx.Response) -> None:
    assert_error(response, 429, "rate_limited")
    assert int(response.headers["retry-after"]) > 0
    assert int(response.headers["retry-after"]) <= 60
    assert response.headers.get("x-request-id")


async def spend(client: httpx.AsyncClient, count: int, **kwargs: object) -> None:
    """`count` requests that the limit lets through."""
    for _ in range(count):
        response = await client.get(f"{API}/payment-modes", **kwargs)  # type: ignore[arg-type]
        assert response.status_code != 429, f"limited too early: {response.text}"


async def test_default_is_120_per_minute_then_429(runtime: Runtime) -> None:
    assert Settings().rate_limit == "120/minute"
    async with client_of(app_with(runtime, rate_limit="120/minute")) as client:
        await spend(client, 120)
        assert_limited(await client.get(f"{API}/payment-modes"))


async def test_sixth_request_is_limited_whatever_it_asks(runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    async with client_of(app_with(runtime, rate_limit="5/minute")) as client:
        for _ in range(5):
            ok = await client.get(f"{API}/payments", headers=merchant.headers())
            assert ok.status_code == 200
        # Authenticated or not, known route or not, every request counts against the IP.
        assert_limited(await client.get(f"{API}/payments", headers=merchant.headers()))
        assert_limited(await client.post(f"{API}/payments", json={}))
        assert_limited(await client.get("/nothing"))


async def test_limit_is_per_client_ip(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    # CAURI_TRUSTED_PROXIES from the environment, as a deployment sets it.
    monkeypatch.setenv("CAURI_TRUSTED_PROXIES", "10.0.0.0/8, 127.0.0.1")
    monkeypatch.setenv("CAURI_RATE_LIMIT", "5/minute")
    from_env = Settings()
    app = app_with(
        runtime, rate_limit=from_env.rate_limit, trusted_proxies=from_env.trusted_proxies
    )
    async with client_of(app, peer="10.1.2.3") as client:
        await spend(client, 5, headers=from_ip("198.51.100.1"))
        assert_limited(await client.get(f"{API}/payment-modes", headers=from_ip("198.51.100.1")))
        # Another client behind the same proxy keeps its own budget.
        await spend(client, 5, headers=from_ip("198.51.100.2"))
        # The proxy's own requests (no header) are a third client.
        await spend(client, 5)
    # So is another peer reached directly, without any proxy.
    async with client_of(app, peer="203.0.113.7") as direct:
        await spend(direct, 5)
        assert_limited(await direct.get(f"{API}/payment-modes"))


async def test_forwarded_for_is_ignored_from_an_untrusted_peer(runtime: Runtime) -> None:
    app = app_with(runtime, rate_limit="5/minute", trusted_proxies="10.0.0.0/8")
    async with client_of(app, peer="203.0.113.9") as client:
        # A client rotating a forged header gets no fresh budget from it.
        for n in range(5):
            await spend(client, 1, headers=from_ip(f"198.51.100.{n}"))
        assert_limited(await client.get(f"{API}/payment-modes", headers=from_ip("198.51.100.99")))


async def test_forwarded_for_split_over_several_header_lines(runtime: Runtime) -> None:
    # Each proxy of a chain may add its own header line; together they are one list (RFC
    # 9110, 5.3), so the client is still found behind the last proxy.
    app = app_with(runtime, rate_limit="2/minute", trusted_proxies="10.0.0.0/8")
    async with client_of(app, peer="10.0.0.1") as client:
        for client_address in ("198.51.100.1", "198.51.100.2"):
            chain = [("X-Forwarded-For", client_address), ("X-Forwarded-For", "10.0.0.2")]
            await spend(client, 2, headers=chain)
            assert_limited(await client.get(f"{API}/payment-modes", headers=chain))


async def test_no_proxy_trusted_by_default(runtime: Runtime) -> None:
    assert Settings().trusted_proxies == ""
    async with client_of(app_with(runtime, rate_limit="2/minute")) as client:
        await spend(client, 1, headers=from_ip("198.51.100.1"))
        await spend(client, 1, headers=from_ip("198.51.100.2"))
        assert_limited(await client.get(f"{API}/payment-modes", headers=from_ip("198.51.100.3")))


@needs_redis
async def test_redis_limit_is_shared_between_replicas(runtime: Runtime) -> None:
    settings = {"rate_limit": "5/minute", "redis_url": REDIS_URL, "trusted_proxies": "127.0.0.1"}
    ip = fresh_ip()
    async with (
        client_of(app_with(runtime, **settings)) as first,
        client_of(app_with(runtime, **settings)) as second,
    ):
        await spend(first, 3, headers=from_ip(ip))
        await spend(second, 2, headers=from_ip(ip))
        assert_limited(await second.get(f"{API}/payment-modes", headers=from_ip(ip)))
        assert_limited(await first.get(f"{API}/payment-modes", headers=from_ip(ip)))
        # Another address keeps its own budget on both.
        other = fresh_ip()
        await spend(first, 3, headers=from_ip(other))
        await spend(second, 2, headers=from_ip(other))
    # A replica started later (a process restart) still sees the spent budget: it lives in
    # Redis, not in any process.
    async with client_of(app_with(runtime, **settings)) as third:
        assert_limited(await third.get(f"{API}/payment-modes", headers=from_ip(ip)))


async def test_unreachable_redis_does_not_take_the_service_down(runtime: Runtime) -> None:
    # Nothing listens on port 1; the limiter fails open rather than failing every request.
    app = app_with(runtime, rate_limit="1/minute", redis_url="redis://127.0.0.1:1/0")
    merchant = await make_merchant(runtime)
    async with client_of(app) as client:
        for _ in range(3):
            response = await client.get(f"{API}/payments", headers=merchant.headers())
            assert response.status_code == 200


async def test_an_ipv6_client_is_counted_per_64(runtime: Runtime) -> None:
    app = app_with(runtime, rate_limit="4/minute")
    # Four addresses of one /64, each a different peer: one budget between them.
    for n in range(4):
        async with client_of(app, peer=f"2001:db8:1:2::{n + 1:x}") as client:
            await spend(client, 1)
    async with client_of(app, peer="2001:db8:1:2:ffff:ffff:ffff:ffff") as client:
        assert_limited(await client.get(f"{API}/payment-modes"))
    # The next /64 has its own.
    async with client_of(app, peer="2001:db8:1:3::1") as client:
        await spend(client, 4)
        assert_limited(await client.get(f"{API}/payment-modes"))


async def test_an_ipv6_client_behind_a_proxy_is_counted_per_64(runtime: Runtime) -> None:
    app = app_with(runtime, rate_limit="3/minute", trusted_proxies="10.0.0.0/8")
    async with client_of(app, peer="10.0.0.1") as client:
        for suffix in (":1", ":abcd", "1:2:3:4"):
            await spend(client, 1, headers=from_ip(f"2001:db8:9:9:{suffix}"))
        assert_limited(await client.get(f"{API}/payment-modes", headers=from_ip("2001:db8:9:9::")))


@pytest.mark.parametrize(
    ("ip", "key"),
    [
        ("198.51.100.7", "198.51.100.7"),
        ("::ffff:198.51.100.7", "198.51.100.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::", "2001:db8:1:2::/64"),
        ("::1", "::/64"),
        ("unknown", "unknown"),
    ],
)
def test_budget_key(ip: str, key: str) -> None:
    assert budget_key(ip) == key


PROXIES = trusted_networks("10.0.0.0/8, 192.168.1.1, 2001:db8:ffff::/48")


@pytest.mark.parametrize(
    ("peer", "forwarded_for", "expected"),
    [
        ("203.0.113.5", None, "203.0.113.5"),
        ("203.0.113.5", "198.51.100.1", "203.0.113.5"),  # untrusted peer: header ignored
        ("10.0.0.1", None, "10.0.0.1"),  # a trusted peer without header is the client
        ("10.0.0.1", "198.51.100.1", "198.51.100.1"),
        ("10.0.0.1", " 198.51.100.1 ", "198.51.100.1"),
        # Right to left: a client cannot hide behind a hop it wrote itself.
        ("10.0.0.1", "1.1.1.1, 198.51.100.1", "198.51.100.1"),
        ("10.0.0.1", "1.1.1.1, 198.51.100.1, 192.168.1.1, 10.9.9.9", "198.51.100.1"),
        ("10.0.0.1", "10.2.2.2, 192.168.1.1", "10.2.2.2"),  # all trusted: the first hop
        ("10.0.0.1", "", "10.0.0.1"),
        ("10.0.0.1", " , ", "10.0.0.1"),
        ("2001:db8:ffff::1", "2001:db8:1::5", "2001:db8:1::5"),
        ("192.168.1.2", "198.51.100.1", "192.168.1.2"),  # a host entry is that host only
        (None, None, "unknown"),
        (None, "198.51.100.1", "unknown"),
    ],
)
def test_client_ip(peer: str | None, forwarded_for: str | None, expected: str) -> None:
    assert client_ip(peer, forwarded_for, PROXIES) == expected


def test_no_trusted_proxies_means_the_peer() -> None:
    assert trusted_networks("") == []
    assert client_ip("10.0.0.1", "198.51.100.1", trusted_networks(" ")) == "10.0.0.1"


async def test_operator_callbacks_have_their_own_bucket(runtime: Runtime) -> None:
    """An operator settling a burst neither takes a merchant's budget on a shared address nor
    is refused at the merchants' rate; its own bucket has a limit too."""
    app = app_with(runtime, rate_limit="3/minute", callback_rate_limit="5/minute")
    async with client_of(app) as client:
        await spend(client, 3)
        assert_limited(await client.get(f"{API}/payment-modes"))
        for _ in range(5):
            notice = await client.post(f"{API}/operator-callbacks/mtn", content=b"{}")
            assert notice.status_code == 404  # no such operator here, but not limited
        assert_limited(await client.post(f"{API}/operator-callbacks/mtn", content=b"{}"))


async def test_customers_pages_have_their_own_bucket_and_a_page_for_a_refusal(
    runtime: Runtime,
) -> None:
    """A waiting page refreshes itself and a carrier's customers share addresses: their pages
    neither take a merchant's budget nor are refused at its rate; a refusal there is a page
    a person reads, in French."""
    app = app_with(runtime, rate_limit="3/minute", checkout_rate_limit="5/minute")
    async with client_of(app) as client:
        await spend(client, 3)
        assert_limited(await client.get(f"{API}/payment-modes"))
        for path in ("/checkout/cs_unknown", "/pay/unknown", "/checkout/cs_x/return"):
            assert (await client.get(path)).status_code == 404  # not limited
        await client.get("/checkout/cs_unknown")
        await client.get("/checkout/cs_unknown")
        refused = await client.get("/checkout/cs_unknown")
        assert refused.status_code == 429
        assert refused.headers["content-type"].startswith("text/html")
        assert "Patientez une minute" in refused.text
        assert int(refused.headers["retry-after"]) >= 1


async def test_what_customers_pages_post_counts_in_a_smaller_bucket(runtime: Runtime) -> None:
    """No address floods numbers with payment requests: the forms' posts count apart from
    the pages they are on, which stay readable."""
    app = app_with(runtime, checkout_rate_limit="50/minute", checkout_attempt_rate_limit="2/minute")
    async with client_of(app) as client:
        for _ in range(2):
            assert (await client.post("/checkout/cs_unknown", data={})).status_code != 429
        refused = await client.post("/l/unknown", data={})
        assert refused.status_code == 429 and "Patientez" in refused.text
        assert (await client.get("/checkout/cs_unknown")).status_code == 404  # still readable


async def test_a_window_opens_at_the_first_request_and_gives_the_whole_budget_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fixed windows: exact counting within one, Reset the seconds left in it, and the whole
    budget back when it ends; ended windows are dropped, so memory follows recent clients."""
    clock = [1000.0]
    monkeypatch.setattr(ratelimit.time, "monotonic", lambda: clock[0])
    windows, item = LocalWindows(), parse("2/minute")
    assert [await windows.hit(item, "a") for _ in range(3)] == [
        Count(True, 1, 60),
        Count(True, 0, 60),
        Count(False, 0, 60),
    ]
    clock[0] += 59.5
    assert await windows.hit(item, "a") == Count(False, 0, 1)
    assert await windows.hit(item, "b") == Count(True, 1, 60)  # its own window
    clock[0] += 0.5
    assert await windows.hit(item, "a") == Count(True, 1, 60)
    clock[0] += LocalWindows.SWEEP_EVERY + 60
    await windows.hit(item, "c")
    assert set(windows.windows) == {"c"}
