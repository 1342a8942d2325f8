"""One signed HTTP POST of a notification (spec: Headers sent; Delivery, retries).

Holds no database connection: the caller reads what it needs before and records the
outcome after, so a slow endpoint costs a task, not a pooled connection.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

import h11
import httpx

from cauri.webhooks import connections, url_safety
from cauri.webhooks.signature import signature_header

USER_AGENT = "Service-Webhooks/1.0"
MAX_ERROR_LENGTH = 500


@dataclass(frozen=True)
class Notification:
    url: str
    event: str
    delivery_id: str
    body: bytes
    secret: str


@dataclass(frozen=True)
class AttemptOutcome:
    response_code: int | None
    error: str | None
    duration_ms: int

    @property
    def succeeded(self) -> bool:
        return self.response_code is not None and 200 <= self.response_code < 300


def serialize(envelope: dict[str, Any]) -> bytes:
    """The body, serialized once: these exact bytes are signed and sent."""
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode()


def headers(notification: Notification, timestamp: int) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Service-Event": notification.event,
        "X-Service-Delivery": notification.delivery_id,
        "X-Service-Signature": signature_header(notification.body, notification.secret, timestamp),
    }


@cache
def _tls() -> ssl.SSLContext:
    # Loading the CA bundle costs milliseconds; one context serves every attempt.
    return httpx.create_ssl_context()


def _request(url: httpx.URL, sent_headers: dict[str, str], length: int) -> h11.Request:
    """The POST: its Host header names the URL's host, whatever address the socket goes to."""
    return h11.Request(
        method="POST",
        target=url.raw_path,
        headers=[
            (b"Host", url.netloc),
            (b"Content-Length", b"%d" % length),
            *((name.encode(), value.encode()) for name, value in sent_headers.items()),
        ],
    )


async def _post_pinned(
    destination: connections.Destination,
    request: h11.Request,
    body: bytes,
    connect_limit: float,
) -> connections.Answer:
    """POSTs to the destination's checked address; over TLS the server name and the
    certificate check use the URL's host name. A kept connection that the endpoint closed
    while idle fails before any answer: the request then goes once more on a new
    connection (the endpoint may see it twice, which at-least-once delivery allows)."""
    pool = connections.pool()
    kept = pool.take(destination)
    if kept is not None:
        try:
            return await connections.post(kept, request, body)
        except ConnectionError:
            kept.close()
        except BaseException:
            kept.close()
            raise
    tls = _tls() if destination.scheme == "https" else None
    fresh = await connections.connect(destination, tls, connect_limit)
    try:
        return await connections.post(fresh, request, body)
    except BaseException:
        fresh.close()
        raise


async def _post_to_first_reachable(
    url: httpx.URL,
    addresses: list[str],
    request: h11.Request,
    body: bytes,
    connect_limit: float,
) -> connections.Answer:
    """Tries each checked address in turn while the connection cannot be made (a name with
    an IPv6 address its host does not listen on, say); a request once sent is never
    repeated on another address."""
    host, port = url.raw_host.decode("ascii"), url.port or (443 if url.scheme == "https" else 80)
    for address in addresses[:-1]:
        destination = connections.Destination(url.scheme, host, port, address)
        try:
            return await _post_pinned(destination, request, body, connect_limit)
        except (connections.ConnectFailed, connections.ConnectTimeout):
            continue
    destination = connections.Destination(url.scheme, host, port, addresses[-1])
    return await _post_pinned(destination, request, body, connect_limit)


async def send(
    notification: Notification,
    *,
    timestamp: int,
    time_limit: float,
    connect_limit: float,
    reach: url_safety.Reach,
) -> AttemptOutcome:
    """One attempt: checks the address, POSTs, and reports what happened; never raises for
    what the endpoint did (refused address, DNS failure, refusal, timeout, non-2xx).
    `connect_limit` bounds each TCP handshake within `time_limit`: a dead host holds a
    delivery slot that long, not the whole time limit."""
    started = time.monotonic()
    code: int | None = None
    error: str | None = None
    answer: connections.Answer | None = None
    try:
        url = url_safety.check_url(notification.url, reach=reach)
        # The whole attempt, resolution included, must end within the timeout.
        async with asyncio.timeout(time_limit):
            addresses = await connections.pool().addresses(
                url.raw_host.decode("ascii"),
                url.port or 0,
                reach,
                partial(url_safety.resolve, url, reach=reach),
            )
            body = notification.body
            answer = await _post_to_first_reachable(
                url,
                addresses,
                _request(url, headers(notification, timestamp), len(body)),
                body,
                min(connect_limit, time_limit),
            )
            code = answer.status
    except url_safety.UnsafeUrl as exc:
        error = str(exc)
    except connections.ConnectTimeout:
        error = f"Connexion impossible dans le délai de {connect_limit:g} s."
    except TimeoutError:
        error = f"Pas de réponse dans le délai de {time_limit:g} s."
    except (connections.ConnectFailed, connections.MalformedResponse) as exc:
        error = f"Échec de connexion : {exc}"
    except OSError as exc:
        error = f"Échec de connexion : {type(exc).__name__} {exc}".strip()
    duration_ms = round((time.monotonic() - started) * 1000)
    if answer is not None:
        # After the outcome is known: reading the rest of the answer never changes it.
        await connections.pool().release(answer)
    if code is not None and not 200 <= code < 300:
        error = f"Réponse HTTP {code}."
    return AttemptOutcome(code, error and error[:MAX_ERROR_LENGTH], duration_ms)
