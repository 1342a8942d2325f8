from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.connectors.builders import Builds, registered_kinds


@pytest.fixture
def builds() -> Iterator[Builds]:
    """The test-only kinds `fake` and `collect_only`, and what they built."""
    yield from registered_kinds()
