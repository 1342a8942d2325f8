"""Where customers reach this service: the base of `payment_url` (and of the callback URLs
operators are given). It is CAURI_PUBLIC_URL; without it, only a server bound to loopback
knows its own address, from the socket it listens on. Never the request's Host header: a
client chooses that one, and a `payment_url` on an attacker's host would send customers there.
"""

from __future__ import annotations

import ipaddress

from cauri.config import Settings

LOOPBACK_NAMES = {"localhost"}


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def public_base_url(settings: Settings, server: tuple[str, int | None] | None) -> str | None:
    """The base URL for links given to customers; None when it cannot be known safely.
    `server` is the ASGI scope's: the address and port the server socket is bound to."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    if server is None or not is_loopback(server[0]):
        return None
    host, port = server
    authority = f"[{host}]" if ":" in host else host
    return f"http://{authority}" if port in (None, 80) else f"http://{authority}:{port}"
