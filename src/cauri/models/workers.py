from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class WorkerHeartbeat(Base):
    """A running worker's last sign of life (`GET /ready` wants a recent one)."""

    __tablename__ = "worker_heartbeats"

    worker_id: Mapped[str] = mapped_column(String, primary_key=True)
    started_at: Mapped[datetime]
    beat_at: Mapped[datetime]
