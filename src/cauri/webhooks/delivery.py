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
from functools import cache
from typing import Any

import httpx

from cauri.client.webhooks import signature_header
from cauri.webhooks import url_safety

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


async def _post_pinned(
    url: httpx.URL, address: str, body: bytes, sent_headers: dict[str, str], limits: httpx.Timeout
) -> int:
    """POSTs to `address` while the request still names `url`'s host: the Host header and,
    over TLS, the SNI and the certificate check use the name, the socket the checked address."""
    pinned = url.copy_with(host=address)
    extensions: dict[str, Any] = {}
    if url.scheme == "https" and url.host != address:
        extensions["sni_hostname"] = url.raw_host.decode("ascii")
    async with httpx.AsyncClient(
        verify=_tls(),
        follow_redirects=False,
        trust_env=False,
        timeout=limits,
    ) as client:
        request = client.build_request(
            "POST",
            pinned,
            content=body,
            headers={**sent_headers, "Host": url.netloc.decode("ascii")},
            extensions=extensions,
        )
        # Only the status matters; the response body is never read.
        response = await client.send(request, stream=True)
        await response.aclose()
        return response.status_code


async def _post_to_first_reachable(
    url: httpx.URL,
    addresses: list[str],
    body: bytes,
    sent_headers: dict[str, str],
    limits: httpx.Timeout,
) -> int:
    """Tries each checked address in turn while the connection is refused (a name with an
    IPv6 address its host does not listen on, say); a request once sent is never repeated."""
    for address in addresses[:-1]:
        try:
            return await _post_pinned(url, address, body, sent_headers, limits)
        except httpx.ConnectError:
            continue
    return await _post_pinned(url, addresses[-1], body, sent_headers, limits)


async def send(
    notification: Notification,
    *,
    timestamp: int,
    time_limit: float,
    connect_limit: float,
    allow_private: bool,
) -> AttemptOutcome:
    """One attempt: checks the address, POSTs, and reports what happened; never raises for
    what the endpoint did (refused address, DNS failure, refusal, timeout, non-2xx).
    `connect_limit` bounds each TCP handshake within `time_limit`: a dead host holds a
    delivery slot that long, not the whole time limit."""
    limits = httpx.Timeout(time_limit, connect=min(connect_limit, time_limit))
    started = time.monotonic()
    code: int | None = None
    error: str | None = None
    try:
        url = url_safety.check_url(notification.url, allow_private=allow_private)
        # The whole attempt, resolution included, must end within the timeout.
        async with asyncio.timeout(time_limit):
            addresses = await url_safety.resolve(url, allow_private=allow_private)
            code = await _post_to_first_reachable(
                url, addresses, notification.body, headers(notification, timestamp), limits
            )
    except url_safety.UnsafeUrl as exc:
        error = str(exc)
    except httpx.ConnectTimeout:
        error = f"Connexion impossible dans le délai de {connect_limit:g} s."
    except (TimeoutError, httpx.TimeoutException):
        error = f"Pas de réponse dans le délai de {time_limit:g} s."
    except (httpx.HTTPError, OSError) as exc:
        error = f"Échec de connexion : {type(exc).__name__} {exc}".strip()
    if code is not None and not 200 <= code < 300:
        error = f"Réponse HTTP {code}."
    duration_ms = round((time.monotonic() - started) * 1000)
    return AttemptOutcome(code, error and error[:MAX_ERROR_LENGTH], duration_ms)
