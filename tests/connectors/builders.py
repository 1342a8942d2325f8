"""A test-only connector kind, and the `cauri` command run with connector settings."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.connectors.kinds import KINDS
from cauri.connectors.service import AccountDefinition, connectors
from cauri.kit.db import unit_of_work
from cauri.operators.config import ConnectorConfig, ConnectorKind
from cauri.operators.protocol import CheckReport, Disbursement, OperatorResult
from cauri.runtime import Runtime
from tests import cli
from tests.cli import CliResult
from tests.conftest import TEST_SECRET_KEY
from tests.payments.builders import FakeLiveOperator

SECRET = "tok-7f3c9a-never-shown"


@dataclass
class FakeConnector(FakeLiveOperator):
    """A connector of the `fake` kind: the fake network, plus what it was built with."""

    config: ConnectorConfig | None = None
    closed: bool = False
    checks: list[str] = field(default_factory=list)

    async def refund(self, disbursement: Disbursement) -> OperatorResult:
        return OperatorResult(self.outcome)

    async def refund_status(self, disbursement: Disbursement) -> OperatorResult:
        return OperatorResult(self.outcome)

    async def check(self) -> CheckReport:
        assert self.config is not None
        if self.config.secrets.get("token") != SECRET:
            return CheckReport(ok=False, detail="the operator refused the token (401)")
        return CheckReport(ok=True, detail="authenticated", facts={"balance": "1000 XOF"})

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class Builds:
    """Every connector the `fake` kind built, oldest first."""

    made: list[FakeConnector] = field(default_factory=list)
    fail: Exception | None = None

    def __call__(self, config: ConnectorConfig) -> FakeConnector:
        if self.fail is not None:
            raise self.fail
        connector = FakeConnector(config=config)
        self.made.append(connector)
        return connector


def registered_kinds() -> Iterator[Builds]:
    """Registers the test-only kinds `fake` (every operation) and `collect_only`."""
    made = Builds()
    kinds = {
        "fake": ConnectorKind(
            name="fake",
            settings=("region",),
            optional_settings=("currency",),
            secrets=("token",),
            build=made,
        ),
        "collect_only": ConnectorKind(
            name="collect_only",
            settings=(),
            secrets=("token",),
            build=made,
            operations=("collect",),
        ),
    }
    with pytest.MonkeyPatch.context() as patch:
        for name, kind in kinds.items():
            patch.setitem(KINDS, name, kind)
        yield made


async def add_fake(
    runtime: Runtime,
    name: str = "fake-bj",
    *,
    kind: str = "fake",
    token: str = SECRET,
    settings: Mapping[str, str] | None = None,
) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        await connectors.add(
            session,
            AccountDefinition(
                name=name,
                kind=kind,
                environment="sandbox",
                base_url="https://fake.example",
                settings={"region": "bj"}
                if settings is None and kind == "fake"
                else settings or {},
                secrets={"token": token},
            ),
            secret_key=runtime.settings.secret_key,
            now=runtime.clock.now(),
        )


async def set_route(runtime: Runtime, operator: str, **changes: str | None) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        await connectors.set_routes(session, operator, changes, runtime.clock.now())


async def in_session(runtime: Runtime, work: Any) -> Any:
    async with runtime.sessionmaker() as session:
        session_: AsyncSession = session
        return await work(session_)


async def cauri(
    database_url: str, *args: str, stdin: bytes | None = None, process: bool = False, **env: str
) -> CliResult:
    """`cauri ARGS` with CAURI_SECRET_KEY (and `env`, CAURI_… names) on the test database."""
    settings = {
        "CAURI_DATABASE_URL": database_url.replace("postgresql+asyncpg://", "postgresql://", 1),
        "CAURI_SECRET_KEY": TEST_SECRET_KEY,
    } | {f"CAURI_{k.upper()}": v for k, v in env.items()}
    typed = None if stdin is None else stdin.decode()
    return await cli.run(*args, env=settings, stdin=typed, process=process)
