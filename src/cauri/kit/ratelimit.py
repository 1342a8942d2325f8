"""Per-client-IP request rate limit (spec: Limits, 120 requests per minute, then 429).

Shared across replicas through Redis when CAURI_REDIS_URL is set, else in process memory.
X-Forwarded-For is believed only from CAURI_TRUSTED_PROXIES. An IPv6 client is counted per
/64: that is what one subscriber gets, and changing addresses inside it is free.

Every counted response, refusals included, says the client's budget: X-RateLimit-Limit (the
requests a window allows), X-RateLimit-Remaining (left now) and X-RateLimit-Reset (seconds,
not an epoch, so that clocks need not agree: until the oldest request counted leaves the
moving window and Remaining grows again). A 429's Retry-After is the same delay (1 at least).
GET /metrics is not counted: the monitoring's scrapes are not a client's requests.

Operators' notifications have their own bucket (CAURI_CALLBACK_RATE_LIMIT): an operator
that settles a burst of payments must not be refused, nor take a merchant's budget when
both share an address.
"""

from __future__ import annotations

import ipaddress
import math
import time

import structlog
from limits import RateLimitItem, WindowStats, parse
from limits.aio.strategies import MovingWindowRateLimiter
from limits.errors import StorageError
from limits.storage import storage_from_string
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cauri.config import Settings
from cauri.kit.error_handlers import render
from cauri.kit.errors import RateLimited

log = structlog.get_logger("cauri.ratelimit")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

CALLBACKS_PATH = "/api/v1/operator-callbacks/"
METRICS_PATH = "/metrics"


def trusted_networks(spec: str) -> list[Network]:
    return [
        ipaddress.ip_network(part.strip(), strict=False) for part in spec.split(",") if part.strip()
    ]


def client_ip(peer: str | None, forwarded_for: str | None, trusted: list[Network]) -> str:
    """The nearest address not of a trusted proxy, reading X-Forwarded-For right to left."""
    peer = peer or "unknown"
    if not forwarded_for or not _is_trusted(peer, trusted):
        return peer
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _is_trusted(hop, trusted):
            return hop
    return hops[0] if hops else peer


def budget_key(ip: str) -> str:
    """Who pays for a request: an IPv4 address (an IPv4-mapped one too), or an IPv6 /64."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv4Address):
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((address, 64), strict=False))


def _with_headers(send: Send, headers: list[tuple[bytes, bytes]]) -> Send:
    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            message.setdefault("headers", []).extend(headers)
        await send(message)

    return send_with_headers


def _is_trusted(address: str, trusted: list[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in trusted)


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.item = parse(settings.rate_limit)
        self.callback_item = parse(settings.callback_rate_limit)
        uri = "async+" + (settings.redis_url or "memory://")
        self.limiter = MovingWindowRateLimiter(storage_from_string(uri, wrap_exceptions=True))
        self.trusted = trusted_networks(settings.trusted_proxies)

    async def _hit(self, item: RateLimitItem, key: str) -> tuple[bool, WindowStats] | None:
        """Counts the request; whether it is allowed, and the budget left (None: unknown)."""
        try:
            allowed = await self.limiter.hit(item, key)
            return allowed, await self.limiter.get_window_stats(item, key)
        except StorageError:
            # A rate limiter that is down must not take the payment service down with it.
            log.warning("ratelimit.storage_unavailable")
            return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == METRICS_PATH:
            # The monitoring's scrapes are not a client's requests.
            await self.app(scope, receive, send)
            return
        # Proxies of a chain may each add their own header line: together they are one list.
        forwarded = b",".join(v for k, v in scope["headers"] if k == b"x-forwarded-for")
        peer = scope["client"][0] if scope.get("client") else None
        key = budget_key(client_ip(peer, forwarded.decode("latin-1") or None, self.trusted))
        item = self.item
        if scope["path"].startswith(CALLBACKS_PATH):
            item, key = self.callback_item, "callbacks:" + key
        counted = await self._hit(item, key)
        if counted is None:
            await self.app(scope, receive, send)
            return
        allowed, stats = counted
        reset_in = max(0, math.ceil(stats.reset_time - time.time()))
        budget = [
            (b"x-ratelimit-limit", str(item.amount).encode()),
            (b"x-ratelimit-remaining", str(max(0, stats.remaining)).encode()),
            (b"x-ratelimit-reset", str(reset_in).encode()),
        ]
        if allowed:
            await self.app(scope, receive, _with_headers(send, budget))
            return
        retry_after = max(1, reset_in)
        # Rendered as every other error is: the same envelope, encoding and content type.
        refusal = render(RateLimited(headers={"Retry-After": str(retry_after)}))
        await refusal(scope, receive, _with_headers(send, budget))
