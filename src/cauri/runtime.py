"""What a process of Cauri runs with: settings, clock, database, operators."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from cauri.config import Settings
from cauri.connectors.registry import OperatorRegistry
from cauri.kit.clock import Clock, SystemClock
from cauri.kit.db import database_url, make_engine, make_sessionmaker
from cauri.operators.simulator import Simulator


@dataclass
class Runtime:
    settings: Settings
    clock: Clock
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    operators: OperatorRegistry

    @classmethod
    def build(
        cls, settings: Settings, clock: Clock | None = None, url: str | None = None
    ) -> Runtime:
        engine = make_engine(
            url or database_url(settings),
            prepared_statements=settings.database_prepared_statements,
        )
        return cls(
            settings=settings,
            clock=clock or SystemClock(),
            engine=engine,
            sessionmaker=make_sessionmaker(engine),
            operators=operator_registry(settings),
        )

    async def close(self) -> None:
        await self.operators.aclose()
        await self.engine.dispose()


def operator_registry(settings: Settings) -> OperatorRegistry:
    return OperatorRegistry(
        Simulator(settings.test_settle_delay),
        secret_key=settings.secret_key,
        previous_keys=settings.previous_keys,
        timeout=settings.operator_timeout,
        connect_timeout=settings.operator_connect_timeout,
    )
