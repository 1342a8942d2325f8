"""Sending a `Call` over HTTP with the retry policy, blocking or async: the only code the
two clients do not share, kept to the loop each transport needs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import httpx

from cauri_client import errors
from cauri_client._calls import Call, Json, Listing
from cauri_client.retries import RetryPolicy

T = TypeVar("T")

VERSION = "0.1.0"


def headers(api_key: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {api_key}",
        "Accept": "application/json",
        "User-Agent": f"cauri-client-python/{VERSION}",
    }


def api_root(base_url: str) -> str:
    """The base URL ends with `/api/v1` (spec: Conventions); the service's own address is
    taken too."""
    root = base_url.rstrip("/")
    return root if root.endswith("/api/v1") else f"{root}/api/v1"


def _request(call: Call[Any]) -> dict[str, Any]:
    return {"method": call.method, "url": call.path, "params": call.params, "json": call.body}


def _envelope(response: httpx.Response) -> Json:
    if not response.is_success:
        raise errors.from_response(response)
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or "data" not in body:
        raise errors.UnexpectedResponse(
            "unexpected_response",
            f"HTTP {response.status_code} without the API's envelope: {response.text[:200]}",
            http_status=response.status_code,
            request_id=response.headers.get("x-request-id"),
        )
    return body


class SyncTransport:
    def __init__(
        self, http: httpx.Client, retries: RetryPolicy, sleep: Callable[[float], None]
    ) -> None:
        self.http = http
        self._retries = retries
        self._sleep = sleep

    def run(self, call: Call[T]) -> T:
        attempt = 1
        while True:
            try:
                try:
                    response = self.http.request(**_request(call))
                except httpx.TransportError as failure:
                    raise errors.ConnectionFailed(failure) from failure
                return call.read(_envelope(response))
            except errors.CauriError as error:
                wait = self._retries.delay(attempt, error, call.replayable)
                if wait is None:
                    raise
            self._sleep(wait)
            attempt += 1

    def pages(self, listing: Listing[T]) -> Iterator[T]:
        number: int | None = listing.start
        while number is not None:
            page = self.run(listing.page(number))
            yield from page.items
            number = page.next


class AsyncTransport:
    def __init__(
        self,
        http: httpx.AsyncClient,
        retries: RetryPolicy,
        sleep: Callable[[float], Awaitable[None]],
    ) -> None:
        self.http = http
        self._retries = retries
        self._sleep = sleep

    async def run(self, call: Call[T]) -> T:
        attempt = 1
        while True:
            try:
                try:
                    response = await self.http.request(**_request(call))
                except httpx.TransportError as failure:
                    raise errors.ConnectionFailed(failure) from failure
                return call.read(_envelope(response))
            except errors.CauriError as error:
                wait = self._retries.delay(attempt, error, call.replayable)
                if wait is None:
                    raise
            await self._sleep(wait)
            attempt += 1

    async def pages(self, listing: Listing[T]) -> AsyncIterator[T]:
        number: int | None = listing.start
        while number is not None:
            page = await self.run(listing.page(number))
            for item in page.items:
                yield item
            number = page.next
