"""an index for the capped claim: the queued jobs of each group, oldest first (issue 13)

The claim of a grouped lane (webhook deliveries, capped per endpoint) ranked every due job
of the lane on each claim, a cost that grew with the backlog; with this index it skips
from group to group and reads each group's oldest jobs only.

Revision ID: 0019_job_claims
Revises: 0018_reconciliations
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_job_claims"
down_revision: str | None = "0018_reconciliations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_jobs_queued_group",
        "jobs",
        ["lane", "group_key", "run_at", "id"],
        postgresql_where=sa.text("status = 'queued' AND group_key IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_jobs_queued_group",
        table_name="jobs",
        postgresql_where=sa.text("status = 'queued' AND group_key IS NOT NULL"),
    )
