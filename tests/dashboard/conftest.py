"""Fixtures of the dashboard's tests: the app on a real HTTP port (the hosted page's
fixtures), and a client of the dashboard's door that keeps its cookies."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.console.builders import ConsoleClient
from tests.console.conftest import console as console
from tests.support import ServerThread
from tests.web.conftest import browser as browser
from tests.web.conftest import page as page
from tests.web.conftest import server as server


@pytest.fixture
async def dashboard(server: ServerThread) -> AsyncIterator[ConsoleClient]:
    async with ConsoleClient(server.base_url, server.clock, prefix="/dashboard") as client:
        yield client
