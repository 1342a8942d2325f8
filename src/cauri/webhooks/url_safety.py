"""Where the service may send notifications (spec: a public HTTPS URL).

The URL is checked when a merchant configures it, and again at every attempt on the
addresses its name resolves to then: a name that pointed to a public address when it was
configured may point to 127.0.0.1 or to a cloud metadata service later (DNS rebinding).
The caller then connects to the address checked here, not to a fresh resolution.
`CAURI_WEBHOOK_ALLOW_PRIVATE=1` lifts the address rules and allows http (development, tests).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

import httpx

from cauri.kit.errors import InvalidRequest

MAX_URL_LENGTH = 2048

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeUrl(Exception):
    """A URL the service refuses to call; the message (French) says why."""


def is_public(address: IPAddress) -> bool:
    """Globally routable unicast: not loopback, private, link-local (169.254.169.254, the
    metadata service, is link-local), unspecified, reserved, shared or multicast."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def check_url(url: str, *, allow_private: bool) -> httpx.URL:
    """The rules that need no network: scheme, credentials, length, literal addresses."""
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeUrl(f"L'URL dépasse {MAX_URL_LENGTH} caractères.")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise UnsafeUrl("L'URL est mal formée.") from None
    schemes = {"https", "http"} if allow_private else {"https"}
    if parsed.scheme not in schemes:
        raise UnsafeUrl("L'URL doit commencer par https://.")
    if not parsed.host:
        raise UnsafeUrl("L'URL n'a pas de nom d'hôte.")
    if parsed.userinfo:
        raise UnsafeUrl("L'URL ne doit pas contenir d'identifiants.")
    if not allow_private:
        literal = _literal_address(parsed.host)
        if literal is not None and not is_public(literal):
            raise UnsafeUrl("L'URL désigne une adresse qui n'est pas publique.")
        if parsed.host == "localhost" or parsed.host.endswith(".localhost"):
            raise UnsafeUrl("L'URL désigne la machine locale.")
    return parsed


def require_safe(url: str, *, field: str, allow_private: bool) -> None:
    """check_url for a request field: a refusal is the API's 422 on that field."""
    try:
        check_url(url, allow_private=allow_private)
    except UnsafeUrl as exc:
        raise InvalidRequest.field(field, str(exc)) from None


async def resolve(url: httpx.URL, *, allow_private: bool) -> list[str]:
    """The addresses to connect to, in the resolver's order; every one must be public."""
    host = url.raw_host.decode("ascii")
    literal = _literal_address(host)
    if literal is not None:
        addresses: list[IPAddress] = [literal]
    else:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, url.port, type=socket.SOCK_STREAM
            )
        except OSError as exc:
            raise UnsafeUrl(f"Le nom {host} ne se résout pas : {exc}.") from None
        # An IPv6 address may carry a zone ("fe80::1%eth0"); the zone is not part of it.
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not addresses:
        raise UnsafeUrl(f"Le nom {host} ne se résout pas.")
    if not allow_private:
        refused = [str(address) for address in addresses if not is_public(address)]
        if refused:
            raise UnsafeUrl(
                f"Le nom {host} désigne une adresse qui n'est pas publique : {', '.join(refused)}."
            )
    return list(dict.fromkeys(str(address) for address in addresses))
