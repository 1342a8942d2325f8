"""People who sign in, staff and merchants' team members, in one table (issue 26)

The staff tables become the tables of every person who signs in: `realm` says whether an
account opens the console (staff) or one merchant's dashboard (a member, `merchant_id`);
an email is unique within its realm. Sign-in attempts are counted per realm and email.

Revision ID: 0029_users
Revises: 0028_checkout_sessions
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029_users"
down_revision: str | None = "0028_checkout_sessions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_RENAMED_TABLES = (
    ("staff_accounts", "users"),
    ("staff_sessions", "user_sessions"),
    ("staff_sign_in_links", "sign_in_links"),
    ("staff_sign_in_attempts", "sign_in_attempts"),
)
_RENAMED_CONSTRAINTS = (
    ("users", "pk_staff_accounts", "pk_users"),
    ("users", "ck_staff_accounts_email_lower_case", "ck_users_email_lower_case"),
    ("user_sessions", "pk_staff_sessions", "pk_user_sessions"),
    ("user_sessions", "ck_staff_sessions_pending", "ck_user_sessions_pending"),
    (
        "user_sessions",
        "fk_staff_sessions_account_id_staff_accounts",
        "fk_user_sessions_account_id_users",
    ),
    ("sign_in_links", "pk_staff_sign_in_links", "pk_sign_in_links"),
    (
        "sign_in_links",
        "fk_staff_sign_in_links_account_id_staff_accounts",
        "fk_sign_in_links_account_id_users",
    ),
    ("sign_in_attempts", "pk_staff_sign_in_attempts", "pk_sign_in_attempts"),
)
_RENAMED_INDEXES = (
    ("ix_staff_sessions_account_id", "ix_user_sessions_account_id"),
    ("ix_staff_sign_in_links_account_id", "ix_sign_in_links_account_id"),
    ("ix_staff_sign_in_attempts_ip_at", "ix_sign_in_attempts_ip_at"),
)
_REALM_ROLE = (
    "(realm = 'staff' AND merchant_id IS NULL "
    "AND role IN ('admin', 'finance', 'support', 'viewer')) "
    "OR (realm = 'merchant' AND merchant_id IS NOT NULL "
    "AND role IN ('owner', 'developer', 'finance', 'viewer'))"
)


def upgrade() -> None:
    for old, new in _RENAMED_TABLES:
        op.rename_table(old, new)
    for table, old, new in _RENAMED_CONSTRAINTS:
        op.execute(f'ALTER TABLE "{table}" RENAME CONSTRAINT "{old}" TO "{new}"')
    for old, new in _RENAMED_INDEXES:
        op.execute(f'ALTER INDEX "{old}" RENAME TO "{new}"')
    op.add_column("users", sa.Column("realm", sa.String(), server_default="staff", nullable=False))
    op.add_column("users", sa.Column("merchant_id", sa.String(), nullable=True))
    op.create_foreign_key(
        op.f("fk_users_merchant_id_merchants"),
        "users",
        "merchants",
        ["merchant_id"],
        ["id"],
        ondelete="CASCADE",
    )
    op.create_index(op.f("ix_users_merchant_id"), "users", ["merchant_id"])
    op.drop_constraint(op.f("uq_staff_accounts_email"), "users", type_="unique")
    op.drop_constraint(op.f("ck_staff_accounts_role"), "users", type_="check")
    op.create_check_constraint(op.f("ck_users_realm_role"), "users", _REALM_ROLE)
    op.create_index("uq_users_realm_email", "users", ["realm", "email"], unique=True)
    op.add_column(
        "sign_in_attempts",
        sa.Column("realm", sa.String(), server_default="staff", nullable=False),
    )
    op.drop_index("ix_staff_sign_in_attempts_email_at", table_name="sign_in_attempts")
    op.create_index("ix_sign_in_attempts_email_at", "sign_in_attempts", ["realm", "email", "at"])


def downgrade() -> None:
    op.execute("DELETE FROM users WHERE realm <> 'staff'")
    op.drop_index("ix_sign_in_attempts_email_at", table_name="sign_in_attempts")
    op.execute("DELETE FROM sign_in_attempts WHERE realm <> 'staff'")
    op.drop_column("sign_in_attempts", "realm")
    op.create_index("ix_staff_sign_in_attempts_email_at", "sign_in_attempts", ["email", "at"])
    op.drop_index("uq_users_realm_email", table_name="users")
    op.drop_constraint(op.f("ck_users_realm_role"), "users", type_="check")
    op.create_check_constraint(
        op.f("ck_staff_accounts_role"), "users", "role IN ('admin', 'finance', 'support', 'viewer')"
    )
    op.create_unique_constraint(op.f("uq_staff_accounts_email"), "users", ["email"])
    op.drop_index(op.f("ix_users_merchant_id"), table_name="users")
    op.drop_constraint(op.f("fk_users_merchant_id_merchants"), "users", type_="foreignkey")
    op.drop_column("users", "merchant_id")
    op.drop_column("users", "realm")
    for old, new in _RENAMED_INDEXES:
        op.execute(f'ALTER INDEX "{new}" RENAME TO "{old}"')
    for table, old, new in _RENAMED_CONSTRAINTS:
        op.execute(f'ALTER TABLE "{table}" RENAME CONSTRAINT "{new}" TO "{old}"')
    for old, new in reversed(_RENAMED_TABLES):
        op.rename_table(new, old)
