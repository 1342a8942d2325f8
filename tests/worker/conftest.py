from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.worker.builders import CREATE_RUNS, DROP_RUNS


@pytest.fixture
async def runs_table(engine: AsyncEngine) -> AsyncIterator[None]:
    """test_job_runs, where test handlers write in their job's transaction."""
    async with engine.begin() as connection:
        await connection.execute(text(CREATE_RUNS))
    yield
    async with engine.begin() as connection:
        await connection.execute(text(DROP_RUNS))
