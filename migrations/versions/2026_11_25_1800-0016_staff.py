"""staff accounts, their sessions and sign-in attempts (issue 14)

Revision ID: 0016_staff
Revises: 0015_merchant_expectations
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016_staff"
down_revision: str | None = "0015_merchant_expectations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "staff_accounts",
        sa.Column("id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("email", sa.String(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("password_hash", sa.String(), nullable=True),
        sa.Column("totp_secret", sa.LargeBinary(), nullable=True),
        sa.Column("totp_enabled_at", _TS, nullable=True),
        sa.Column("totp_last_step", sa.BigInteger(), nullable=True),
        sa.Column("disabled_at", _TS, nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("last_sign_in_at", _TS, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_staff_accounts")),
        sa.UniqueConstraint("email", name=op.f("uq_staff_accounts_email")),
        sa.CheckConstraint(
            "role IN ('admin', 'finance', 'support', 'viewer')", name=op.f("ck_staff_accounts_role")
        ),
        sa.CheckConstraint("email = lower(email)", name=op.f("ck_staff_accounts_email_lower_case")),
    )
    op.create_table(
        "staff_sessions",
        sa.Column("token_hash", sa.String(), nullable=False),
        sa.Column("account_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("pending", sa.String(), nullable=True),
        sa.Column("csrf_token", sa.String(), nullable=False),
        sa.Column("ip", sa.String(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("last_seen_at", _TS, nullable=False),
        sa.Column("expires_at", _TS, nullable=False),
        sa.Column("revoked_at", _TS, nullable=True),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_staff_sessions")),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["staff_accounts.id"],
            name=op.f("fk_staff_sessions_account_id_staff_accounts"),
            ondelete="CASCADE",
        ),
        sa.CheckConstraint("pending IN ('totp', 'enroll')", name=op.f("ck_staff_sessions_pending")),
    )
    op.create_index(op.f("ix_staff_sessions_account_id"), "staff_sessions", ["account_id"])
    op.create_table(
        "staff_sign_in_links",
        sa.Column("token_hash", sa.String(), nullable=False),
        sa.Column("account_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("expires_at", _TS, nullable=False),
        sa.Column("used_at", _TS, nullable=True),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_staff_sign_in_links")),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["staff_accounts.id"],
            name=op.f("fk_staff_sign_in_links_account_id_staff_accounts"),
            ondelete="CASCADE",
        ),
    )
    op.create_index(
        op.f("ix_staff_sign_in_links_account_id"), "staff_sign_in_links", ["account_id"]
    )
    op.create_table(
        "staff_sign_in_attempts",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("email", sa.String(), nullable=False),
        sa.Column("ip", sa.String(), nullable=False),
        sa.Column("at", _TS, nullable=False),
        sa.Column("succeeded", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_staff_sign_in_attempts")),
    )
    op.create_index("ix_staff_sign_in_attempts_email_at", "staff_sign_in_attempts", ["email", "at"])
    op.create_index("ix_staff_sign_in_attempts_ip_at", "staff_sign_in_attempts", ["ip", "at"])


def downgrade() -> None:
    op.drop_table("staff_sign_in_attempts")
    op.drop_table("staff_sign_in_links")
    op.drop_table("staff_sessions")
    op.drop_table("staff_accounts")
