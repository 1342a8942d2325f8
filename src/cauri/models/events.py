from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, LargeBinary
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class Event(Base):
    """A notification as sent: `data` is frozen at emission, as the resource then was."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_list", "merchant_id", "livemode", "created_at"),)
    # Partitioned by month (migration 0041): the table's key holds its partition key, the
    # ORM's identity is the id alone.
    __mapper_args__ = {"primary_key": ["id"]}  # noqa: RUF012 (SQLAlchemy's declaration)

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    livemode: Mapped[bool]
    type: Mapped[str]
    data: Mapped[dict[str, Any]] = mapped_column(JSONB)
    # Where this event is delivered instead of the environment's endpoint (a payment's
    # callback_url), if anywhere.
    callback_url: Mapped[str | None]
    created_at: Mapped[datetime] = mapped_column(primary_key=True)


class WebhookEndpoint(Base):
    """One endpoint and one signing secret per merchant and environment. The secret is kept
    encrypted (`sealed_secret`, cauri.merchants.webhook_secrets); `secret` holds it in clear
    only in rows written before migration 0025, until `cauri secrets rotate` (or `cauri
    migrate` with CAURI_SECRET_KEY set) seals them. Exactly one of the two is set."""

    __tablename__ = "webhook_endpoints"

    merchant_id: Mapped[str] = mapped_column(
        ForeignKey("merchants.id", ondelete="CASCADE"), primary_key=True
    )
    livemode: Mapped[bool] = mapped_column(primary_key=True)
    url: Mapped[str | None]
    secret: Mapped[str | None]
    sealed_secret: Mapped[bytes | None] = mapped_column(LargeBinary)
    updated_at: Mapped[datetime]
    # The circuit breaker of the deliveries of this merchant and environment
    # (cauri.webhooks.breaker): open while open_until is ahead, after enough failures in a row.
    consecutive_failures: Mapped[int] = mapped_column(Integer, server_default="0")
    open_until: Mapped[datetime | None]
