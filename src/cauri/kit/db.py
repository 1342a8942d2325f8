"""Engine and sessions. One session per request or job, committed by its wrapper."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from cauri.config import Settings
from cauri.kit import embedded_pg
from cauri.kit.errors import CauriError


def database_url(settings: Settings) -> str:
    if settings.database_url is None:
        return embedded_pg.start(settings.data_dir)
    return as_asyncpg(settings.database_url)


def as_asyncpg(url: str) -> str:
    for prefix in ("postgresql+asyncpg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    return url


def make_engine(url: str, pool_size: int = 20) -> AsyncEngine:
    # hide_parameters: a failing statement's error text (logged) would carry the values bound
    # to it: phone numbers, customers' names, key digests.
    return create_async_engine(
        url, pool_size=pool_size, max_overflow=20, pool_pre_ping=False, hide_parameters=True
    )


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)


@asynccontextmanager
async def unit_of_work(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    """Commits when the block ends normally, rolls back when it raises."""
    async with sessionmaker() as session:
        try:
            yield session
        except BaseException:
            await session.rollback()
            raise
        await session.commit()


T = TypeVar("T")


async def attempt(session: AsyncSession, change: Callable[[], Awaitable[T]]) -> T | CauriError:
    """The change's result, or its refusal with nothing of it kept (but what a refusal
    records as a fact: `keeps_writes`)."""
    savepoint = await session.begin_nested()
    try:
        result = await change()
    except CauriError as refusal:
        if savepoint.is_active:
            await (savepoint.commit() if refusal.keeps_writes else savepoint.rollback())
        return refusal
    if savepoint.is_active:
        await savepoint.commit()
    return result
