"""Fixtures of the console's tests: the app on a real HTTP port and Debian's Chromium (the
hosted page's fixtures), and a console client that keeps the console's cookies."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.console.builders import ConsoleClient
from tests.support import ServerThread
from tests.web.conftest import browser as browser
from tests.web.conftest import page as page
from tests.web.conftest import server as server


@pytest.fixture
async def console(server: ServerThread) -> AsyncIterator[ConsoleClient]:
    async with ConsoleClient.of(server) as client:
        yield client
