from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class WebhookDelivery(Base):
    """One event on its way to one URL (spec: Webhook delivery log entry). Its id is the
    event's id: the `X-Service-Delivery` header, stable across every attempt."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (Index("ix_webhook_deliveries_list", "merchant_id", "livemode", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    event_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("events.id"), unique=True
    )
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
    created_at: Mapped[datetime]
    delivered_at: Mapped[datetime | None]
    next_attempt_at: Mapped[datetime | None]


class WebhookAttempt(Base):
    """One HTTP call of a delivery (or one refused before any call: `error` says why)."""

    __tablename__ = "webhook_attempts"
    __table_args__ = (UniqueConstraint("delivery_id", "number"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    delivery_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("webhook_deliveries.id", ondelete="CASCADE")
    )
    number: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime]
    duration_ms: Mapped[int] = mapped_column(Integer)
    response_code: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(String)
