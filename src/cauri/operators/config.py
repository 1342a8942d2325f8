"""A connector account as a connector sees it, and what a connector kind declares.

The platform's staff configure connector accounts (`cauri connectors add`); the stored
account is decrypted into a `ConnectorConfig` and handed to its kind's `build`. The names of
a kind's settings and secrets are part of the operator-facing contract (DESIGN.md).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from cauri.operators.protocol import OperatorAdapter

# What a connector account can carry for an operator (`cauri routes set`).
ACTIONS = ("collect", "disburse", "refund")
ENVIRONMENTS = ("sandbox", "production")


@dataclass(frozen=True)
class ConnectorConfig:
    name: str
    kind: str
    environment: str  # one of ENVIRONMENTS
    base_url: str
    settings: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, str] = field(default_factory=dict)  # decrypted, never logged
    # Seconds for a whole exchange, and for its TCP connection within it.
    timeout: float = 30.0
    connect_timeout: float = 5.0


@dataclass(frozen=True)
class ConnectorKind:
    name: str  # `mtn_momo`, …
    settings: tuple[str, ...]  # every setting the kind reads (required unless in optional)
    secrets: tuple[str, ...]  # every secret it reads (all required)
    build: Callable[[ConnectorConfig], OperatorAdapter]
    optional_settings: tuple[str, ...] = ()
    optional_secrets: tuple[str, ...] = ()  # read when given (a product the account may have)
    # Operations it can carry, for `cauri routes set` to refuse a route it cannot.
    operations: tuple[str, ...] = ("collect", "disburse", "refund")
    # The catalogue's operator codes an account of this kind can carry, from its settings
    # (None: any the staff route to it).
    operators: Callable[[Mapping[str, str]], Collection[str]] | None = None
    # Reads the settings as the connector will; raises ValueError, in plain words, for
    # one it could not use (checked by `cauri connectors add`).
    check_settings: Callable[[Mapping[str, str]], None] | None = None
