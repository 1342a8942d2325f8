"""Live mode end to end: the test's runtime sits under the public URL of a Cauri server
running over real HTTP, where the operators' fakes send their callbacks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cauri.config import Settings
from tests.conftest import TEST_SECRET_KEY
from tests.support import ServerThread

# Seconds an operator call may take before its outcome is unknown: short, for the faults.
OPERATOR_TIMEOUT = 1.0


@pytest.fixture
def callbacks(database_url: str) -> Iterator[ServerThread]:
    """Cauri's API over real HTTP, where the fake sends its callbacks."""
    base = Settings(
        database_url=database_url,
        rate_limit="100000/minute",
        webhook_allow_private=True,
        secret_key=TEST_SECRET_KEY,
    )
    with ServerThread(base, database_url) as server:
        yield server


@pytest.fixture
def settings(settings: Settings, callbacks: ServerThread) -> Settings:
    """The test's own runtime, under the callback server's public URL."""
    return settings.model_copy(
        update={"public_url": callbacks.base_url, "operator_timeout": OPERATOR_TIMEOUT}
    )
