"""the audit log of staff and CLI actions, and payout approvals by several staff (issue 14)

- audit_log: who did what to which resource, when, with the state before and after and a
  reason. Append-only in the database: a trigger refuses UPDATE and DELETE of a row and
  TRUNCATE of the table (only a superuser, by disabling triggers, gets past it).
- payout_approvals: each person's approval of a held payout, once per person.
- platform_settings.payout_dual_approval_above (XOF, `_eur`, `_usd`): above it, a held
  payout needs two different people's approvals; NULL: never.

Revision ID: 0017_audit
Revises: 0016_staff
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0017_audit"
down_revision: str | None = "0016_staff"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_DUAL_APPROVAL = (
    "payout_dual_approval_above",
    "payout_dual_approval_above_eur",
    "payout_dual_approval_above_usd",
)


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.BigInteger(), sa.Identity(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor_kind", sa.String(), nullable=False),
        sa.Column("actor_name", sa.String(), nullable=False),
        sa.Column("staff_account_id", postgresql.UUID(as_uuid=True), nullable=True),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("resource_type", sa.String(), nullable=False),
        sa.Column("resource_id", sa.String(), nullable=False),
        sa.Column("before", postgresql.JSONB(), nullable=True),
        sa.Column("after", postgresql.JSONB(), nullable=True),
        sa.Column("reason", sa.String(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
        sa.CheckConstraint("actor_kind IN ('staff', 'cli')", name=op.f("ck_audit_log_actor_kind")),
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at", "id"])
    op.create_index("ix_audit_log_actor", "audit_log", ["actor_name", "at"])
    op.create_index("ix_audit_log_action", "audit_log", ["action", "at"])
    op.create_index("ix_audit_log_resource", "audit_log", ["resource_type", "resource_id", "at"])
    op.execute(
        """
        CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP
                USING ERRCODE = 'insufficient_privilege';
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log "
        "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
    )
    op.execute(
        "CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log "
        "FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()"
    )

    op.create_table(
        "payout_approvals",
        sa.Column("id", sa.BigInteger(), sa.Identity(), nullable=False),
        sa.Column(
            "payout_reference",
            sa.String(),
            sa.ForeignKey(
                "payouts.reference", name=op.f("fk_payout_approvals_payout_reference_payouts")
            ),
            nullable=False,
        ),
        sa.Column("approver", sa.String(), nullable=False),
        sa.Column("approver_name", sa.String(), nullable=False),
        sa.Column("staff_account_id", postgresql.UUID(as_uuid=True), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_payout_approvals")),
        sa.UniqueConstraint(
            "payout_reference", "approver", name=op.f("uq_payout_approvals_payout_reference")
        ),
    )
    for column in _DUAL_APPROVAL:
        op.add_column("platform_settings", sa.Column(column, sa.BigInteger(), nullable=True))


def downgrade() -> None:
    for column in _DUAL_APPROVAL:
        op.drop_column("platform_settings", column)
    op.drop_table("payout_approvals")
    op.drop_table("audit_log")
    op.execute("DROP FUNCTION audit_log_append_only()")
