"""The client package against a real Cauri: the app served over HTTP on loopback (with its
worker, which delivers webhooks), one server for the module, a merchant per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from cauri.config import Settings
from cauri.runtime import Runtime
from cauri_client import AsyncCauri, Cauri
from tests.conftest import TEST_SECRET_KEY
from tests.support import MerchantKeys, ServerThread, make_merchant


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[ServerThread]:
    settings = Settings(
        database_url=database_url,
        secret_key=TEST_SECRET_KEY,
        rate_limit="100000/minute",
        webhook_allow_private=True,
        worker_poll_interval=0.1,
    )
    with ServerThread(settings, database_url, run_worker=True) as running:
        yield running


@pytest.fixture
async def merchant(runtime: Runtime) -> MerchantKeys:
    return await make_merchant(runtime)


def no_sleep(_seconds: float) -> None:
    """The retries' waits, skipped: the tests do not wait for them."""


@pytest.fixture
def cauri(server: ServerThread, merchant: MerchantKeys) -> Iterator[Cauri]:
    with Cauri(merchant.test_key, base_url=server.base_url, sleep=no_sleep) as client:
        yield client


@pytest.fixture
async def async_cauri(server: ServerThread, merchant: MerchantKeys) -> AsyncIterator[AsyncCauri]:
    async with AsyncCauri(merchant.test_key, base_url=server.base_url) as client:
        yield client
