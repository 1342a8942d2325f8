from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import (
    BigInteger,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class WebhookDelivery(Base):
    """One event on its way to one URL (spec: Webhook delivery log entry). Its id is the
    event's id: the `X-Service-Delivery` header, stable across every attempt."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index("ix_webhook_deliveries_list", "merchant_id", "livemode", "created_at"),
        UniqueConstraint("event_id", "created_at"),
        ForeignKeyConstraint(["event_id", "created_at"], ["events.id", "events.created_at"]),
    )
    # Partitioned by month (migration 0041): the table's key holds its partition key, the
    # ORM's identity is the id alone.
    __mapper_args__ = {"primary_key": ["id"]}  # noqa: RUF012 (SQLAlchemy's declaration)

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    event_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id"))
    livemode: Mapped[bool]
    event: Mapped[str] = mapped_column(String)
    # Fixed when the event is emitted: retries go where the first attempt went.
    url: Mapped[str] = mapped_column(String)
    # pending (attempts left) | success | failed (gave up; a merchant's retry reopens it)
    status: Mapped[str] = mapped_column(String)
    attempts: Mapped[int] = mapped_column(Integer)
    # Attempts of the current series: the retry schedule restarts with a merchant's retry.
    series_attempts: Mapped[int] = mapped_column(Integer)
    response_code: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(primary_key=True)  # the event's
    delivered_at: Mapped[datetime | None]
    next_attempt_at: Mapped[datetime | None]


class WebhookAttempt(Base):
    """One HTTP call of a delivery (or one refused before any call: `error` says why)."""

    __tablename__ = "webhook_attempts"
    __table_args__ = (
        UniqueConstraint("delivery_id", "number", "delivery_created_at"),
        ForeignKeyConstraint(
            ["delivery_id", "delivery_created_at"],
            ["webhook_deliveries.id", "webhook_deliveries.created_at"],
            ondelete="CASCADE",
        ),
    )
    # Partitioned by month (migration 0041): the table's key holds its partition key, the
    # ORM's identity is the id alone.
    __mapper_args__ = {"primary_key": ["id"]}  # noqa: RUF012 (SQLAlchemy's declaration)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    delivery_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    # The delivery's: an attempt is partitioned, and archived, with its delivery.
    delivery_created_at: Mapped[datetime] = mapped_column(primary_key=True)
    number: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime]
    duration_ms: Mapped[int] = mapped_column(Integer)
    response_code: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(String)
