from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Index, Integer, String, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class Job(Base):
    """The outbox and job queue (DESIGN invariant 5). Done jobs are deleted."""

    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_due", "lane", "run_at", postgresql_where=text("status = 'queued'")),
        Index(
            "ix_jobs_leased", "lane", "locked_until", postgresql_where=text("status = 'running'")
        ),
        # The capped claim's: the groups with a queued job, and each one's oldest.
        Index(
            "ix_jobs_queued_group",
            "lane",
            "group_key",
            "run_at",
            "id",
            postgresql_where=text("status = 'queued' AND group_key IS NOT NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String)
    # Decided at enqueue from the kind and the environment (cauri.worker.lanes).
    lane: Mapped[str] = mapped_column(String)
    # Jobs of one group (a webhook endpoint) run at most a capped number at once.
    group_key: Mapped[str | None] = mapped_column(String)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB)
    status: Mapped[str] = mapped_column(String, server_default="queued")
    run_at: Mapped[datetime]
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    max_attempts: Mapped[int] = mapped_column(Integer, server_default="10")
    locked_until: Mapped[datetime | None]
    last_error: Mapped[str | None]
    created_at: Mapped[datetime]
