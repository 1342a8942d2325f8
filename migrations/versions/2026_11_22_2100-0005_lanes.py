"""job lanes, per-endpoint delivery groups, webhook circuit breaker

Revision ID: 0005_lanes
Revises: 0004_webhooks
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_lanes"
down_revision: str | None = "0004_webhooks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("lane", sa.String(), nullable=True))
    op.add_column("jobs", sa.Column("group_key", sa.String(), nullable=True))
    # Jobs already queued: deliveries go to their webhook lane and endpoint group, every other
    # kind to the live money lane (their environment is not on the job; live is the safe side).
    op.execute(
        "UPDATE jobs SET lane = CASE WHEN d.livemode THEN 'webhooks-live' ELSE 'webhooks-test' END, "
        "group_key = d.merchant_id || CASE WHEN d.livemode THEN '/live' ELSE '/test' END "
        "FROM webhook_deliveries d "
        "WHERE jobs.kind = 'webhooks.deliver' AND d.id = CAST(jobs.payload->>'delivery_id' AS uuid)"
    )
    op.execute("UPDATE jobs SET lane = 'money-live' WHERE lane IS NULL")
    op.alter_column("jobs", "lane", nullable=False)
    op.drop_index("ix_jobs_due", table_name="jobs", postgresql_where=sa.text("status = 'queued'"))
    op.drop_index(
        "ix_jobs_leased", table_name="jobs", postgresql_where=sa.text("status = 'running'")
    )
    op.create_index(
        "ix_jobs_due", "jobs", ["lane", "run_at"], postgresql_where=sa.text("status = 'queued'")
    )
    op.create_index(
        "ix_jobs_leased",
        "jobs",
        ["lane", "locked_until"],
        postgresql_where=sa.text("status = 'running'"),
    )
    op.add_column(
        "webhook_endpoints",
        sa.Column("consecutive_failures", sa.Integer(), server_default="0", nullable=False),
    )
    op.add_column(
        "webhook_endpoints",
        sa.Column("open_until", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("webhook_endpoints", "open_until")
    op.drop_column("webhook_endpoints", "consecutive_failures")
    op.drop_index("ix_jobs_leased", table_name="jobs")
    op.drop_index("ix_jobs_due", table_name="jobs")
    op.create_index(
        "ix_jobs_due", "jobs", ["run_at"], postgresql_where=sa.text("status = 'queued'")
    )
    op.create_index(
        "ix_jobs_leased",
        "jobs",
        ["locked_until"],
        postgresql_where=sa.text("status = 'running'"),
    )
    op.drop_column("jobs", "group_key")
    op.drop_column("jobs", "lane")
