"""Plain builders and helpers for tests (no fixtures here: see conftest.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
import uvicorn
from sqlalchemy import select, text

from cauri.app import create_app
from cauri.config import Settings
from cauri.connectors.secrets import keyring
from cauri.kit.clock import Clock, ManualClock, SystemClock
from cauri.kit.db import unit_of_work
from cauri.merchants import webhook_secrets
from cauri.merchants.service import merchants
from cauri.models import WebhookEndpoint
from cauri.runtime import Runtime


@dataclass(frozen=True)
class MerchantKeys:
    id: str
    test_key: str
    live_key: str

    def headers(self, livemode: bool = False) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.live_key if livemode else self.test_key}"}


async def make_merchant(
    runtime: Runtime, *, name: str = "Boutique", status: str = "active"
) -> MerchantKeys:
    async with unit_of_work(runtime.sessionmaker) as session:
        new = await merchants.create(
            session,
            name=name,
            status=status,
            now=runtime.clock.now(),
            box=keyring(runtime.settings),
        )
    return MerchantKeys(new.merchant.id, new.test_key, new.live_key)


async def webhook_secrets_in_clear(runtime: Runtime) -> list[str]:
    """Every endpoint's signing secret, as its merchant reads it (they are kept sealed)."""
    async with runtime.sessionmaker() as session:
        endpoints = await session.scalars(select(WebhookEndpoint))
        return [webhook_secrets.revealed(runtime.settings, endpoint) for endpoint in endpoints]


def with_settings(runtime: Runtime, **changes: Any) -> Runtime:
    """The same database and clock, other settings (e.g. a short timeout)."""
    return dataclasses.replace(runtime, settings=runtime.settings.model_copy(update=changes))


def momo_body(**overrides: Any) -> dict[str, Any]:
    """A valid Mobile Money payment body (MTN Bénin), settled at once in test mode."""
    return {"amount": 1000, "operator": "mtn", "phone_number": "22997000000"} | overrides


def card_body(**overrides: Any) -> dict[str, Any]:
    return {
        "amount": 5000,
        "operator": "VISA",
        "customer": {"firstname": "Awa", "lastname": "Diallo", "email": "awa@example.com"},
        "return_url": "https://merchant.example/return",
    } | overrides


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["success"] is False
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


async def scalar(runtime: Runtime, sql: str, **params: Any) -> Any:
    async with runtime.sessionmaker() as session:
        return (await session.execute(text(sql), params)).scalar()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RunningClock:
    """The test's clock, running: where the test has set it, plus the real time gone by
    since. A served app reads it so that a test may place its data at an hour of its choosing
    (away from midnight) and still have the app's clock move on its own as a server's does."""

    def __init__(self, set_by_the_test: ManualClock) -> None:
        self._set = set_by_the_test
        self._started = time.monotonic()

    def now(self) -> datetime:
        return self._set.now() + timedelta(seconds=time.monotonic() - self._started)


class ServerThread:
    """A real HTTP server of the app (on loopback unless `host` says), in its own thread and
    event loop, with its own engine (asyncpg pools belong to one loop). For browsers and other
    real clients."""

    def __init__(
        self,
        settings: Settings,
        url: str,
        *,
        run_worker: bool = False,
        host: str = "127.0.0.1",
        clock: Clock | None = None,
    ) -> None:
        self.host = host
        self.clock = clock or SystemClock()
        self.port = free_port()
        self.base_url = f"http://{host}:{self.port}"
        self._settings = settings
        self._url = url
        self._run_worker = run_worker
        self._server: uvicorn.Server | None = None
        # The served app's own runtime, once started: a test gives it a live network.
        self.runtime: Runtime | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        runtime = Runtime.build(self._settings, self.clock, url=self._url)
        self.runtime = runtime
        app = create_app(runtime, run_worker=self._run_worker)
        config = uvicorn.Config(app, host=self.host, port=self.port, log_level="warning")
        self._server = uvicorn.Server(config)
        asyncio.run(self._server.serve())

    def __enter__(self) -> ServerThread:
        self._thread.start()
        # 15 s were once not enough on a loaded CI machine (the app and its engine built and
        # uvicorn started in a thread that shares two cores with the rest of the suite).
        _wait_until(lambda: self._server is not None and self._server.started, timeout=60)
        return self

    def __exit__(self, *_: object) -> None:
        if self._server is not None:
            self._server.should_exit = True
        self._thread.join(timeout=10)


def _wait_until(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met in time")
        time.sleep(0.05)
