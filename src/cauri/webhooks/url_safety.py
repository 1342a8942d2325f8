"""Where the service may send notifications (spec: a public HTTPS URL).

The URL is checked when a merchant configures it, and again at every attempt on the
addresses its name resolves to then: a name that pointed to a public address when it was
configured may point to 127.0.0.1 or to a cloud metadata service later (DNS rebinding).
The caller then connects to the address checked here, not to a fresh resolution.
How far the service may reach is a `Reach`: public addresses only (the default), also this
machine's loopback over http (a service serving on loopback only: a developer's machine,
where a local receiver listens), or anything (`CAURI_WEBHOOK_ALLOW_PRIVATE=true`: tests,
private networks).
"""

from __future__ import annotations

import asyncio
import enum
import ipaddress
import socket
from typing import TYPE_CHECKING

import httpx

from cauri.kit.errors import InvalidRequest

if TYPE_CHECKING:
    from cauri.config import Settings

MAX_URL_LENGTH = 2048

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeUrl(Exception):
    """A URL the service refuses to call; the message (French) says why."""


class Reach(enum.Enum):
    PUBLIC = "public"
    LOOPBACK = "loopback"  # public, and this machine's loopback (http allowed there)
    PRIVATE = "private"  # any address, http allowed

    @classmethod
    def configured(cls, settings: Settings) -> Reach:
        """CAURI_WEBHOOK_ALLOW_PRIVATE, else CAURI_WEBHOOK_ALLOW_LOOPBACK (which `cauri
        serve` sets when it serves on loopback only and it is not set)."""
        if settings.webhook_allow_private:
            return cls.PRIVATE
        return cls.LOOPBACK if settings.webhook_allow_loopback else cls.PUBLIC


# Named in refusals: a developer whose local receiver is refused learns what lifts it.
_LIFTED_BY = (
    " (un récepteur local ou privé : CAURI_WEBHOOK_ALLOW_PRIVATE=true, ou un service servant"
    " sur 127.0.0.1 seulement, qui accepte la machine locale)"
)


# IANA's special-purpose address registries, written out rather than read from
# `ipaddress`'s `is_global`, whose answers changed between Python patch releases.
DENIED_IPV4 = tuple(
    ipaddress.IPv4Network(network)
    for network in (
        "0.0.0.0/8",  # "this network"
        "10.0.0.0/8",  # private
        "100.64.0.0/10",  # shared address space (carrier-grade NAT)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, where cloud metadata services answer
        "172.16.0.0/12",  # private
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "192.168.0.0/16",  # private
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, and 255.255.255.255 (limited broadcast)
    )
)
GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
# Inside 2000::/3; everything outside it (loopback, unspecified, unique-local, link-local,
# multicast, discard-only 100::/64, ...) is refused by the global unicast rule.
DENIED_IPV6 = tuple(
    ipaddress.IPv6Network(network)
    for network in (
        "2001::/23",  # IETF protocol assignments (Teredo, 2001::/32, is read as IPv4 first)
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation
    )
)
_IPV4_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")
_LOW_32 = 0xFFFFFFFF


def _v4(bits: int) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(bits & _LOW_32)


def _nat64_local_candidates(value: int) -> list[ipaddress.IPv4Address]:
    """RFC 6052 puts the IPv4 address after a /48, /56, /64 or /96 prefix, skipping bits
    64-71; which one a local-use NAT64 network uses is not visible in the address, so every
    reading is checked."""
    after_48 = ((value >> 64) & 0xFFFF) << 16 | (value >> 40) & 0xFFFF
    after_56 = ((value >> 64) & 0xFF) << 24 | (value >> 32) & 0xFFFFFF
    return [_v4(after_48), _v4(after_56), _v4(value >> 24), _v4(value)]


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses a packet to `address` ends up at, when it is a translation or
    tunnelling address (NAT64, 6to4, Teredo, IPv4-compatible or -mapped); else None."""
    value = int(address)
    if address in _IPV4_MAPPED or address in _IPV4_COMPATIBLE or address in _NAT64:
        return [_v4(value)]
    if address in _NAT64_LOCAL:
        return _nat64_local_candidates(value)
    if address in _SIX_TO_FOUR:
        return [_v4(value >> 80)]
    if address in _TEREDO:
        # The server, then the client, whose address is stored inverted (obfuscated).
        return [_v4(value >> 64), _v4(~value)]
    return None


def is_public(address: IPAddress) -> bool:
    """Globally routable unicast, by the explicit lists above: never loopback, private,
    link-local (169.254.169.254, the metadata service, is link-local), shared, reserved,
    documentation or multicast, nor an IPv6 address that leads to such an IPv4 address."""
    if isinstance(address, ipaddress.IPv4Address):
        return not any(address in network for network in DENIED_IPV4)
    embedded = embedded_ipv4(address)
    if embedded is not None:
        return all(is_public(ipv4) for ipv4 in embedded)
    return address in GLOBAL_UNICAST and not any(address in network for network in DENIED_IPV6)


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _is_local_name(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost")


def _allowed(address: IPAddress, reach: Reach) -> bool:
    if reach is Reach.PRIVATE:
        return True
    return is_public(address) or (reach is Reach.LOOPBACK and address.is_loopback)


def check_url(url: str, *, reach: Reach) -> httpx.URL:
    """The rules that need no network: scheme, credentials, length, literal addresses."""
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeUrl(f"L'URL dépasse {MAX_URL_LENGTH} caractères.")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise UnsafeUrl("L'URL est mal formée.") from None
    if not parsed.host:
        raise UnsafeUrl("L'URL n'a pas de nom d'hôte.")
    literal = _literal_address(parsed.host)
    local = _is_local_name(parsed.host) or (literal is not None and literal.is_loopback)
    plain_http_allowed = reach is Reach.PRIVATE or (reach is Reach.LOOPBACK and local)
    if parsed.scheme != "https" and not (parsed.scheme == "http" and plain_http_allowed):
        raise UnsafeUrl("L'URL doit commencer par https://" + _LIFTED_BY + ".")
    if parsed.userinfo:
        raise UnsafeUrl("L'URL ne doit pas contenir d'identifiants.")
    if literal is not None and not _allowed(literal, reach):
        raise UnsafeUrl("L'URL désigne une adresse qui n'est pas publique" + _LIFTED_BY + ".")
    if _is_local_name(parsed.host) and reach is Reach.PUBLIC:
        raise UnsafeUrl("L'URL désigne la machine locale" + _LIFTED_BY + ".")
    return parsed


def require_safe(url: str, *, field: str, reach: Reach) -> None:
    """check_url for a request field: a refusal is the API's 422 on that field."""
    try:
        check_url(url, reach=reach)
    except UnsafeUrl as exc:
        raise InvalidRequest.field(field, str(exc)) from None


async def resolve(url: httpx.URL, *, reach: Reach) -> list[str]:
    """The addresses to connect to, in the resolver's order; every one within `reach`."""
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
    refused = [str(address) for address in addresses if not _allowed(address, reach)]
    if refused:
        raise UnsafeUrl(
            f"Le nom {host} désigne une adresse qui n'est pas publique : {', '.join(refused)}."
        )
    return list(dict.fromkeys(str(address) for address in addresses))
