"""The audit log's actors include merchants' team members (issue 26)

Revision ID: 0030_member_actor
Revises: 0029_users
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0030_member_actor"
down_revision: str | None = "0029_users"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_constraint(op.f("ck_audit_log_actor_kind"), "audit_log", type_="check")
    op.create_check_constraint(
        op.f("ck_audit_log_actor_kind"), "audit_log", "actor_kind IN ('staff', 'cli', 'member')"
    )


def downgrade() -> None:
    op.drop_constraint(op.f("ck_audit_log_actor_kind"), "audit_log", type_="check")
    op.create_check_constraint(
        op.f("ck_audit_log_actor_kind"), "audit_log", "actor_kind IN ('staff', 'cli')"
    )
