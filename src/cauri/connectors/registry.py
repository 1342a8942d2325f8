"""Which adapter carries an operator's operation: the registry the whole service uses
(`runtime.operators`).

Test mode: always the simulator. Live mode: an in-process adapter registered for the
operator (`live_adapters`, by lower-case operator code; tests use it) wins; otherwise the
connector account that a route (`cauri routes set`) names for the operator and operation.
Routes and accounts are read from the database at every resolution (small rows), so what the
staff change applies at once on running servers; a built connector is cached per account and
rebuilt when the account's `updated_at` changes. A connector that cannot be built (no
CAURI_SECRET_KEY, a key replaced without CAURI_PREVIOUS_SECRET_KEYS, a broken kind) counts as
unrouted, and is logged once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.connectors.errors import ConnectorError
from cauri.connectors.secrets import SecretBox
from cauri.models.connectors import ConnectorAccount, OperatorRoute
from cauri.operators.catalogue import CATALOGUE
from cauri.operators.config import ACTIONS, ConnectorConfig, ConnectorKind
from cauri.operators.protocol import OperatorAdapter
from cauri.operators.simulator import Simulator

log = structlog.get_logger("cauri.connectors")

SIMULATOR = "simulator"
ADAPTER_PREFIX = "adapter:"

ALL_OPERATORS = frozenset(mode.operator.lower() for mode in CATALOGUE)

_ACCOUNT_COLUMNS = (
    ConnectorAccount.name,
    ConnectorAccount.kind,
    ConnectorAccount.environment,
    ConnectorAccount.base_url,
    ConnectorAccount.settings,
    ConnectorAccount.secrets,
    ConnectorAccount.updated_at,
)


@dataclass(frozen=True)
class Routed:
    # "simulator" in test mode; "adapter:<operator>" for an in-process adapter; else the
    # connector account's name.
    connector: str
    adapter: OperatorAdapter


class _LowerKeys(dict[str, OperatorAdapter]):
    """Operator codes are case-insensitive: keys are stored lower-case."""

    def __init__(self, items: Mapping[str, OperatorAdapter] | None = None) -> None:
        super().__init__()
        for code, adapter in (items or {}).items():
            self[code] = adapter

    def __setitem__(self, key: str, value: OperatorAdapter) -> None:
        super().__setitem__(key.lower(), value)

    def __getitem__(self, key: str) -> OperatorAdapter:
        return super().__getitem__(key.lower())

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key.lower() if isinstance(key, str) else key)

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)


@dataclass
class _Built:
    updated_at: datetime
    adapter: OperatorAdapter | None  # None: it could not be built (logged once)


class OperatorRegistry:
    def __init__(
        self,
        simulator: Simulator,
        live_adapters: Mapping[str, OperatorAdapter] | None = None,
        *,
        secret_key: str | None = None,
        previous_keys: Sequence[str] = (),
        timeout: float = 30.0,
        connect_timeout: float = 5.0,
        kinds: Mapping[str, ConnectorKind] | None = None,
    ) -> None:
        self.simulator = simulator
        self.live_adapters: dict[str, OperatorAdapter] = _LowerKeys(live_adapters)
        self.secret_key = secret_key
        self.previous_keys = tuple(previous_keys)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._kinds = kinds  # None: the module's table, read at each build (tests add kinds)
        self._built: dict[str, _Built] = {}
        # Connectors replaced by a newer version of their account: calls may still be using
        # them, so they are closed with the registry.
        self._retired: list[OperatorAdapter] = []

    def in_process(self, operator: str, livemode: bool) -> OperatorAdapter | None:
        """The adapter held in this process for an operator (the simulator in test mode),
        read without the database: the hot path asks it for an offline decision before the
        payment is recorded, and the simulator's delayed outcomes ask it again. Connectors
        to an operator's network are reached through `route` and `by_name`."""
        if not livemode:
            return self.simulator
        adapter: OperatorAdapter | None = self.live_adapters.get(operator)
        return adapter

    async def route(
        self, session: AsyncSession, operator: str, action: str, livemode: bool
    ) -> Routed | None:
        """What carries `action` for `operator`; None when nothing does (not open)."""
        _check_action(action)
        if not livemode:
            return Routed(SIMULATOR, self.simulator)
        code = operator.strip().lower()
        in_process = self.live_adapters.get(code)
        if in_process is not None:
            return Routed(ADAPTER_PREFIX + code, in_process)
        row = (
            await session.execute(
                select(*_ACCOUNT_COLUMNS)
                .join(OperatorRoute, OperatorRoute.connector == ConnectorAccount.name)
                .where(OperatorRoute.operator == code, OperatorRoute.action == action)
            )
        ).one_or_none()
        return None if row is None else self._routed(row)

    async def by_name(self, session: AsyncSession, connector: str) -> Routed | None:
        """The adapter an operation was sent through, to ask its status or read a callback."""
        if connector == SIMULATOR:
            return Routed(SIMULATOR, self.simulator)
        if connector.startswith(ADAPTER_PREFIX):
            code = connector.removeprefix(ADAPTER_PREFIX).lower()
            in_process = self.live_adapters.get(code)
            return None if in_process is None else Routed(ADAPTER_PREFIX + code, in_process)
        row = (
            await session.execute(
                select(*_ACCOUNT_COLUMNS).where(ConnectorAccount.name == connector)
            )
        ).one_or_none()
        return None if row is None else self._routed(row)

    async def routed(self, session: AsyncSession, action: str, livemode: bool) -> frozenset[str]:
        """The lower-case operator codes with something to carry `action` (test mode: all)."""
        _check_action(action)
        if not livemode:
            return ALL_OPERATORS
        rows = (
            await session.execute(
                select(OperatorRoute.operator, *_ACCOUNT_COLUMNS)
                .join(ConnectorAccount, OperatorRoute.connector == ConnectorAccount.name)
                .where(OperatorRoute.action == action)
            )
        ).all()
        from_routes = {row[0] for row in rows if self._routed(row[1:]) is not None}
        return frozenset(self.live_adapters) | from_routes

    def forget(self) -> None:
        """Drops the cached connectors (they are closed by aclose)."""
        self._retired.extend(b.adapter for b in self._built.values() if b.adapter is not None)
        self._built.clear()

    async def aclose(self) -> None:
        """Closes every connector built."""
        self.forget()
        retired, self._retired = self._retired, []
        for adapter in retired:
            try:
                await adapter.aclose()
            except Exception:  # one connector that fails to close must not keep the others
                log.exception("connector_close_failed")

    def _routed(self, row: Any) -> Routed | None:
        name, kind, environment, base_url, settings, secrets, updated_at = row
        cached = self._built.get(name)
        if cached is None or cached.updated_at != updated_at:
            if cached is not None and cached.adapter is not None:
                self._retired.append(cached.adapter)
            # Built synchronously, with no await in between: two concurrent resolutions never
            # build the same account twice.
            cached = self._built[name] = _Built(
                updated_at,
                self._build_or_log(name, kind, environment, base_url, settings, secrets),
            )
        return None if cached.adapter is None else Routed(name, cached.adapter)

    def _build_or_log(
        self,
        name: str,
        kind: str,
        environment: str,
        base_url: str,
        settings: Mapping[str, str],
        secrets: bytes,
    ) -> OperatorAdapter | None:
        try:
            return self.build(name, kind, environment, base_url, settings, secrets)
        except ConnectorError as error:
            log.error("connector_unusable", connector=name, reason=error.message)
        except Exception as error:
            log.error(
                "connector_unusable", connector=name, reason=f"{type(error).__name__}: {error}"
            )
        return None

    def build(
        self,
        name: str,
        kind: str,
        environment: str,
        base_url: str,
        settings: Mapping[str, str],
        secrets: bytes,
    ) -> OperatorAdapter:
        """A new connector for an account (`cauri connectors check` builds its own); raises
        ConnectorError when the key or the kind is wrong, and whatever the kind's build
        raises."""
        # The connectors' modules (their HTTP clients, their crypto) are imported on the first
        # build: a process that never calls an operator (a CLI read) does without them.
        from cauri.connectors import kinds as known

        connector_kind = known.kind_named(kind, known.KINDS if self._kinds is None else self._kinds)
        config = ConnectorConfig(
            name=name,
            kind=kind,
            environment=environment,
            base_url=base_url,
            settings=dict(settings),
            secrets=SecretBox(self.secret_key, self.previous_keys).decrypt(name, secrets),
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
        )
        return connector_kind.build(config)


def _check_action(action: str) -> None:
    if action not in ACTIONS:
        raise ValueError(f"unknown operator action {action!r}")
