"""The SSRF guard's address rules (issue 8): IPv6 must be global unicast, an IPv4 address
embedded in an IPv6 one is judged as IPv4, and the deny list is explicit. Each address is
tried as a literal in a webhook URL over HTTP, and as what a name resolves to."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import httpx
import pytest

from cauri.runtime import Runtime
from cauri.webhooks import url_safety
from tests.support import assert_error, make_merchant, with_settings
from tests.webhooks.builders import ENDPOINT, api_client

REFUSED = [
    # IPv4 special-purpose registry
    "0.0.0.0",  # noqa: S104 (an address refused, not one bound to)
    "0.1.2.3",
    "10.0.0.1",
    "100.64.0.1",
    "100.127.255.254",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.254",
    "192.0.0.1",
    "192.0.0.9",
    "192.0.2.1",
    "192.88.99.1",
    "192.168.1.1",
    "198.18.0.1",
    "198.19.255.254",
    "198.51.100.7",
    "203.0.113.9",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    # IPv6 outside 2000::/3
    "::",
    "::1",
    "100::1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fec0::1",
    "ff02::1",
    "4000::1",
    "5f00::1",
    # IPv6 special-purpose inside 2000::/3
    "2001:db8::1",
    "2001:2::1",
    "2001:10::1",
    "3fff::1",
    # IPv4 embedded in IPv6, leading to a refused IPv4 address
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:10.0.0.1",
    "::127.0.0.1",
    "::10.0.0.1",
    "64:ff9b::127.0.0.1",
    "64:ff9b::169.254.169.254",
    "64:ff9b::a00:1",
    "64:ff9b:1::7f00:1",
    "64:ff9b:1:7f00:0:100::",  # 127.0.0.1 after a /48 prefix (RFC 6052, skipping bits 64-71)
    "2002:7f00:1::1",
    "2002:a9fe:a9fe::1",
    "2002:c0a8:101::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo client 192.0.2.45 (obfuscated)
    "2001:0:7f00:1::808:808",  # Teredo server 127.0.0.1
    "2001:0:808:808::80ff:fefe",  # Teredo client 127.0.1.1
]

ACCEPTED = [
    "8.8.8.8",
    "1.1.1.1",
    "41.202.207.2",
    "100.63.255.255",
    "100.128.0.1",
    "172.15.255.255",
    "172.32.0.1",
    "192.0.3.1",
    "192.169.0.1",
    "198.20.0.1",
    "223.255.255.254",
    "2606:4700:4700::1111",
    "2a00:1450:4007:80e::200e",
    "2c0f:f248::1",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:808:808::1",
    "2001:0:808:808::f7f7:f7f7",  # Teredo: server and client both 8.8.8.8
]


@pytest.mark.parametrize("address", REFUSED)
def test_refused_addresses_are_not_public(address: str) -> None:
    assert not url_safety.is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ACCEPTED)
def test_public_addresses_are_public(address: str) -> None:
    assert url_safety.is_public(ipaddress.ip_address(address))


def _literal_url(address: str) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"https://{host}/hooks"


@pytest.mark.parametrize("address", REFUSED)
async def test_a_literal_refused_address_is_refused_over_http(
    client: httpx.AsyncClient, runtime: Runtime, address: str
) -> None:
    strict = with_settings(runtime, webhook_allow_private=False)
    merchant = await make_merchant(runtime)
    async with api_client(strict) as strict_client:
        response = await strict_client.put(
            ENDPOINT, json={"url": _literal_url(address)}, headers=merchant.headers()
        )
    error = assert_error(response, 422, "invalid_request")
    assert "publique" in error["details"]["url"][0]


@pytest.mark.parametrize("address", ACCEPTED)
async def test_a_literal_public_address_is_accepted_over_http(
    client: httpx.AsyncClient, runtime: Runtime, address: str
) -> None:
    strict = with_settings(runtime, webhook_allow_private=False)
    merchant = await make_merchant(runtime)
    async with api_client(strict) as strict_client:
        response = await strict_client.put(
            ENDPOINT, json={"url": _literal_url(address)}, headers=merchant.headers()
        )
    assert response.status_code == 200, response.text


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Names and the addresses they resolve to: a DNS zone cannot exist on this machine, so
    the resolver's answer is given here (the rest of `resolve` runs as in production)."""
    zone: dict[str, list[str]] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in zone:
            return real(host, port, *args, **kwargs)
        return [
            (
                socket.AF_INET6 if ":" in address else socket.AF_INET,
                socket.SOCK_STREAM,
                6,
                "",
                (address, port or 443),
            )
            for address in zone[host]
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return zone


@pytest.mark.parametrize("address", REFUSED)
async def test_a_name_resolving_to_a_refused_address_is_refused(
    dns: dict[str, list[str]], address: str
) -> None:
    dns["hooks.example.com"] = ["8.8.8.8", address]
    url = url_safety.check_url("https://hooks.example.com/hooks", reach=url_safety.Reach.PUBLIC)
    with pytest.raises(url_safety.UnsafeUrl, match="publique"):
        await url_safety.resolve(url, reach=url_safety.Reach.PUBLIC)


@pytest.mark.parametrize("address", ACCEPTED)
async def test_a_name_resolving_to_a_public_address_is_accepted(
    dns: dict[str, list[str]], address: str
) -> None:
    dns["hooks.example.com"] = [address]
    url = url_safety.check_url("https://hooks.example.com/hooks", reach=url_safety.Reach.PUBLIC)
    canonical = str(ipaddress.ip_address(address))
    assert await url_safety.resolve(url, reach=url_safety.Reach.PUBLIC) == [canonical]


LOOPBACK_ACCEPTED = ["http://127.0.0.1:3000/webhooks", "http://localhost:3000/webhooks"]
LOOPBACK_REFUSED = [
    "http://10.0.0.1/hooks",  # a private address is no closer for being on a laptop
    "https://169.254.169.254/latest",
    "http://hooks.example.com/hooks",  # http only to this machine
]


@pytest.mark.parametrize("url", LOOPBACK_ACCEPTED)
async def test_a_service_serving_on_loopback_accepts_a_local_receiver(
    runtime: Runtime, url: str
) -> None:
    """Issue 27, friction 1 (`cauri serve` on loopback sets CAURI_WEBHOOK_ALLOW_LOOPBACK)."""
    local = with_settings(runtime, webhook_allow_private=False, webhook_allow_loopback=True)
    merchant = await make_merchant(runtime)
    async with api_client(local) as local_client:
        response = await local_client.put(ENDPOINT, json={"url": url}, headers=merchant.headers())
    assert response.status_code == 200, response.text
    assert url_safety.check_url(url, reach=url_safety.Reach.LOOPBACK).host in {
        "127.0.0.1",
        "localhost",
    }


@pytest.mark.parametrize("url", LOOPBACK_REFUSED)
async def test_loopback_allowed_still_refuses_private_addresses_and_plain_http_elsewhere(
    runtime: Runtime, url: str
) -> None:
    local = with_settings(runtime, webhook_allow_private=False, webhook_allow_loopback=True)
    merchant = await make_merchant(runtime)
    async with api_client(local) as local_client:
        response = await local_client.put(ENDPOINT, json={"url": url}, headers=merchant.headers())
    assert_error(response, 422, "invalid_request")


@pytest.mark.parametrize("url", LOOPBACK_ACCEPTED)
async def test_a_refused_local_receiver_is_told_which_setting_lifts_the_rule(
    runtime: Runtime, url: str
) -> None:
    strict = with_settings(runtime, webhook_allow_private=False)
    merchant = await make_merchant(runtime)
    async with api_client(strict) as strict_client:
        response = await strict_client.put(ENDPOINT, json={"url": url}, headers=merchant.headers())
    error = assert_error(response, 422, "invalid_request")
    assert "CAURI_WEBHOOK_ALLOW_PRIVATE" in error["details"]["url"][0]


async def test_names_resolving_to_loopback_are_delivered_to_only_with_loopback_allowed(
    dns: dict[str, list[str]],
) -> None:
    dns["receiver.localhost"] = ["127.0.0.1"]
    url = url_safety.check_url("http://receiver.localhost:3000/", reach=url_safety.Reach.LOOPBACK)
    assert await url_safety.resolve(url, reach=url_safety.Reach.LOOPBACK) == ["127.0.0.1"]
    with pytest.raises(url_safety.UnsafeUrl):
        await url_safety.resolve(url, reach=url_safety.Reach.PUBLIC)
