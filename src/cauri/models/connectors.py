from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, LargeBinary, String
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class ConnectorAccount(Base):
    """An account at an upstream operator API (`cauri connectors add`): its kind, the
    environment and base URL it talks to, its settings, and its secrets, encrypted as one
    blob with a key derived from CAURI_SECRET_KEY (cauri.connectors.secrets). The names of
    the secrets are kept in clear so that they can be listed."""

    __tablename__ = "connector_accounts"
    __table_args__ = (
        CheckConstraint("environment IN ('sandbox', 'production')", name="environment"),
    )

    name: Mapped[str] = mapped_column(String, primary_key=True)
    kind: Mapped[str]
    environment: Mapped[str]
    base_url: Mapped[str]
    settings: Mapped[dict[str, Any]] = mapped_column(JSONB)
    secret_names: Mapped[list[str]] = mapped_column(ARRAY(String))
    secrets: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime]
    # Changes on every `connectors add` over the name: running servers rebuild the connector.
    updated_at: Mapped[datetime]
    # The last `cauri connectors check`: its verdict and what it read of the operator.
    checked_at: Mapped[datetime | None]
    check_ok: Mapped[bool | None]
    check_detail: Mapped[str | None]
    check_facts: Mapped[dict[str, Any] | None] = mapped_column(JSONB)


class OperatorRoute(Base):
    """Which connector account carries an operator's operation in live mode."""

    __tablename__ = "operator_routes"
    __table_args__ = (
        CheckConstraint("action IN ('collect', 'disburse', 'refund')", name="action"),
        CheckConstraint("operator = lower(operator)", name="operator_lower_case"),
    )

    operator: Mapped[str] = mapped_column(String, primary_key=True)  # catalogue code, lower-case
    action: Mapped[str] = mapped_column(String, primary_key=True)
    connector: Mapped[str] = mapped_column(ForeignKey("connector_accounts.name"), index=True)
    updated_at: Mapped[datetime]
