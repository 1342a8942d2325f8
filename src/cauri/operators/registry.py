"""Which adapter serves an operator in an environment."""

from __future__ import annotations

from collections.abc import Mapping

from cauri.operators.protocol import OperatorAdapter
from cauri.operators.simulator import Simulator


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
