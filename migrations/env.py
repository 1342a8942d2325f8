"""Alembic environment: migrates the database the CAURI_* settings point at."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from cauri import models
from cauri.config import get_settings
from cauri.kit.db import database_url, make_engine
from cauri.models import Base

models.load_all()  # every table on the metadata, for autogenerate to compare
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


async def _run_async(url: str) -> None:
    engine = make_engine(
        url, pool_size=1, prepared_statements=get_settings().database_prepared_statements
    )
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


url = context.config.attributes.get("database_url") or database_url(get_settings())
asyncio.run(_run_async(url))
