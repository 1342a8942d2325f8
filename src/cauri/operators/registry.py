"""Which adapter serves an operator in an environment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.operators.protocol import OperatorAdapter
from cauri.operators.simulator import Simulator

SIMULATOR = "simulator"
IN_PROCESS = "adapter:"


@dataclass(frozen=True)
class Routed:
    connector: str
    adapter: OperatorAdapter


class OperatorRegistry:
    """Test mode always uses the simulator. Live mode uses the adapters configured for this
    deployment; an operator with none is not open to any account (a 422 at payment time)."""

    def __init__(
        self, simulator: Simulator, live_adapters: Mapping[str, OperatorAdapter] | None = None
    ) -> None:
        self.simulator = simulator
        # Keyed by lower-case operator code, as operators are case-insensitive.
        self.live_adapters = {code.lower(): a for code, a in (live_adapters or {}).items()}

    def adapter(self, operator: str, livemode: bool) -> OperatorAdapter | None:
        if not livemode:
            return self.simulator
        return self.live_adapters.get(operator.lower())

    async def route(
        self, session: AsyncSession, operator: str, action: str, livemode: bool
    ) -> Routed | None:
        if not livemode:
            return Routed(SIMULATOR, self.simulator)
        adapter = self.live_adapters.get(operator.lower())
        return None if adapter is None else Routed(IN_PROCESS + operator.lower(), adapter)

    async def by_name(self, session: AsyncSession, connector: str) -> Routed | None:
        if connector == SIMULATOR:
            return Routed(SIMULATOR, self.simulator)
        code = connector.removeprefix(IN_PROCESS).lower()
        adapter = self.live_adapters.get(code)
        return None if adapter is None else Routed(IN_PROCESS + code, adapter)
