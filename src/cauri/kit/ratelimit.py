"""Per-client-IP request rate limit (spec: Limits, 120 requests per minute, then 429).

Shared across replicas through Redis when CAURI_REDIS_URL is set, else in process memory.
X-Forwarded-For is believed only from CAURI_TRUSTED_PROXIES. An IPv6 client is counted per
/64: that is what one subscriber gets, and changing addresses inside it is free.

Fixed windows: a client's window opens at its first request counted and lasts the period
(a minute by default); it allows that many requests, then 429 until it ends and the whole
budget comes back. Counting is exact within a window and O(1) per request (the `limits`
moving window kept every request of the minute in a list and handed its expiry to a thread),
at the price of a burst of up to twice the limit across the end of a window.

Every counted response, refusals included, says the client's budget: X-RateLimit-Limit (the
requests a window allows), X-RateLimit-Remaining (left now) and X-RateLimit-Reset (seconds,
not an epoch, so that clocks need not agree: until the window ends and the whole budget is
back). A 429's Retry-After is the same delay (1 at least). GET /metrics is not counted: the
monitoring's scrapes are not a client's requests.

Operators' notifications have their own bucket (CAURI_CALLBACK_RATE_LIMIT): an operator
that settles a burst of payments must not be refused, nor take a merchant's budget when
both share an address.

Customers' pages (the checkout page, a payment link's page, the card page) have theirs too
(CAURI_CHECKOUT_RATE_LIMIT): a waiting page refreshes itself every few seconds, and the
customers of a carrier share few addresses; its refusal is a page, not JSON, since a person
reads it. What those pages' forms post (a payment tried, a link's session opened, a test
card decided) counts apart again, in a smaller bucket (CAURI_CHECKOUT_ATTEMPT_RATE_LIMIT):
no address floods numbers with payment requests or one-time codes, while a carrier's
customers still pay; each checkout session allows five attempts besides.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import time
from dataclasses import dataclass
from typing import Protocol

import structlog
from limits import RateLimitItem, parse
from limits.aio.storage import Storage
from limits.errors import StorageError
from limits.storage import storage_from_string
from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cauri.config import Settings
from cauri.kit.error_handlers import render
from cauri.kit.errors import RateLimited

log = structlog.get_logger("cauri.ratelimit")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

CALLBACKS_PATH = "/api/v1/operator-callbacks/"
CUSTOMER_PAGES = ("/checkout/", "/pay/", "/l/")
TOO_MANY_PAGE = (
    '<!doctype html><html lang="fr"><meta charset="utf-8">'
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    "<title>Trop de requêtes · Cauri</title><main><h1>Trop de requêtes</h1>"
    "<p>Votre connexion a envoyé trop de requêtes. Patientez une minute, puis réessayez."
    "</p></main></html>"
)
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


@functools.lru_cache(maxsize=4096)  # parsing an address on every request is most of the cost
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


@dataclass(frozen=True, slots=True)
class Count:
    allowed: bool
    remaining: int
    reset_in: int  # seconds until the window ends


class Windows(Protocol):
    async def hit(self, item: RateLimitItem, key: str) -> Count | None:
        """Counts one request; None when the count is unknown (the storage is down)."""


@dataclass(slots=True)
class _Window:
    ends: float  # time.monotonic()
    count: int = 0


class LocalWindows:
    """The windows of this process, in a dict: one lookup and one addition per request, no
    lock (nothing awaits between reading and writing a window), nothing handed to a task or
    a thread. Ended windows are dropped once a sweep period, so that memory follows the
    clients of the last period, not every client ever seen."""

    SWEEP_EVERY = 60.0

    def __init__(self) -> None:
        self.windows: dict[str, _Window] = {}
        self.sweep_at = time.monotonic() + self.SWEEP_EVERY

    async def hit(self, item: RateLimitItem, key: str) -> Count:
        now = time.monotonic()
        if now >= self.sweep_at:
            self.windows = {k: w for k, w in self.windows.items() if w.ends > now}
            self.sweep_at = now + self.SWEEP_EVERY
        window = self.windows.get(key)
        if window is None or window.ends <= now:
            window = self.windows[key] = _Window(now + item.get_expiry())
        window.count += 1
        left = item.amount - window.count
        return Count(left >= 0, max(0, left), math.ceil(window.ends - now))


class SharedWindows:
    """The windows in Redis, shared by replicas: `limits`' fixed window (its
    FixedWindowRateLimiter counts with this same `incr`, the window opening with the key's
    expiry), read in two round trips: the count the increment returns, and the window's
    expiry."""

    def __init__(self, redis_url: str) -> None:
        storage = storage_from_string("async+" + redis_url, wrap_exceptions=True)
        assert isinstance(storage, Storage)
        self.storage = storage

    async def hit(self, item: RateLimitItem, key: str) -> Count | None:
        name = item.key_for(key)
        try:
            count = await self.storage.incr(name, item.get_expiry())
            ends = await self.storage.get_expiry(name)
        except StorageError:
            # A rate limiter that is down must not take the payment service down with it.
            log.warning("ratelimit.storage_unavailable")
            return None
        reset_in = max(0, math.ceil(ends - time.time()))
        return Count(count <= item.amount, max(0, item.amount - count), reset_in)


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.item = parse(settings.rate_limit)
        self.callback_item = parse(settings.callback_rate_limit)
        self.page_item = parse(settings.checkout_rate_limit)
        self.attempt_item = parse(settings.checkout_attempt_rate_limit)
        self.windows: Windows = (
            SharedWindows(settings.redis_url) if settings.redis_url else LocalWindows()
        )
        self.trusted = trusted_networks(settings.trusted_proxies)

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
        customer_page = scope["path"].startswith(CUSTOMER_PAGES)
        if scope["path"].startswith(CALLBACKS_PATH):
            item, key = self.callback_item, "callbacks:" + key
        elif customer_page and scope["method"] == "POST":
            item, key = self.attempt_item, "attempts:" + key
        elif customer_page:
            item, key = self.page_item, "pages:" + key
        count = await self.windows.hit(item, key)
        if count is None:
            await self.app(scope, receive, send)
            return
        budget = [
            (b"x-ratelimit-limit", str(item.amount).encode()),
            (b"x-ratelimit-remaining", str(count.remaining).encode()),
            (b"x-ratelimit-reset", str(count.reset_in).encode()),
        ]
        if count.allowed:
            await self.app(scope, receive, _with_headers(send, budget))
            return
        retry_after = max(1, count.reset_in)
        # Rendered as every other error is: the same envelope, encoding and content type.
        refused = RateLimited(headers={"Retry-After": str(retry_after)})
        refusal = (
            HTMLResponse(TOO_MANY_PAGE, status_code=429, headers=refused.headers)
            if customer_page
            else render(refused)
        )
        await refusal(scope, receive, _with_headers(send, budget))
