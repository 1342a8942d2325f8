"""`Cauri` (blocking) and `AsyncCauri`: one key, one base URL, the operations by resource."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Generic, Self

import httpx

from cauri_client import operations
from cauri_client._operation import Transport
from cauri_client._transports import AsyncTransport, SyncTransport, api_root, headers
from cauri_client.retries import RetryPolicy

DEFAULT_TIMEOUT = 30.0


class _Resources(Generic[Transport]):
    def __init__(self, transport: Transport) -> None:
        self.payments: operations.Payments[Transport] = operations.Payments(transport)
        self.refunds: operations.Refunds[Transport] = operations.Refunds(transport)
        self.payouts: operations.Payouts[Transport] = operations.Payouts(transport)
        self.payout_batches: operations.PayoutBatches[Transport] = operations.PayoutBatches(
            transport
        )
        self.installment_plans: operations.InstallmentPlans[Transport] = (
            operations.InstallmentPlans(transport)
        )
        self.payment_modes: operations.PaymentModes[Transport] = operations.PaymentModes(transport)
        self.balance: operations.BalanceOperations[Transport] = operations.BalanceOperations(
            transport
        )
        self.events: operations.Events[Transport] = operations.Events(transport)
        self.webhooks: operations.Webhooks[Transport] = operations.Webhooks(transport)
        self.checkout_sessions: operations.CheckoutSessions[Transport] = (
            operations.CheckoutSessions(transport)
        )
        self.payment_links: operations.PaymentLinks[Transport] = operations.PaymentLinks(transport)
        self.test_helpers: operations.TestHelpers[Transport] = operations.TestHelpers(transport)


class Cauri(_Resources[SyncTransport]):
    """A blocking client of the API.

    `base_url` is the service's address (`https://pay.example.com`, or its `…/api/v1`).
    `retries` says how often and how long to retry (`cauri_client.retries`); `sleep` waits
    between attempts (a test passes one that does not). `transport` replaces the network
    (httpx's `MockTransport`, a proxy's). Close it, or use it in a `with` block."""

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str,
        timeout: float = DEFAULT_TIMEOUT,
        retries: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        http = httpx.Client(
            base_url=api_root(base_url),
            headers=headers(api_key),
            timeout=timeout,
            transport=transport,
        )
        super().__init__(SyncTransport(http, retries or RetryPolicy(), sleep))
        self._http = http

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class AsyncCauri(_Resources[AsyncTransport]):
    """The client for asyncio: `Cauri`'s operations, awaited (lists: `async for`).
    Close it with `await aclose()`, or use it in an `async with` block."""

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str,
        timeout: float = DEFAULT_TIMEOUT,
        retries: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        http = httpx.AsyncClient(
            base_url=api_root(base_url),
            headers=headers(api_key),
            timeout=timeout,
            transport=transport,
        )
        super().__init__(AsyncTransport(http, retries or RetryPolicy(), sleep))
        self._http = http

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
