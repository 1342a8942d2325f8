"""Checkout sessions and payment links: the page where customers pay (issue 25)

A session is a customer's visit to pay a merchant; each payment tried from it names it
(`payments.checkout_session`, its reference), and the first that succeeds completes it. A
payment link is a lasting address whose visits open sessions.

Revision ID: 0028_checkout_sessions
Revises: 0027_refund_external_id
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0028_checkout_sessions"
down_revision: str | None = "0027_refund_external_id"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "payment_links",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("reference", sa.String(), nullable=False),
        sa.Column("code", sa.String(), nullable=False),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("merchant_id", sa.String(), sa.ForeignKey("merchants.id"), nullable=False),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("external_id", sa.String(), nullable=True),
        sa.Column("description", sa.String(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=True),
        sa.Column("min_amount", sa.BigInteger(), nullable=True),
        sa.Column("max_amount", sa.BigInteger(), nullable=True),
        sa.Column("currency", sa.String(), nullable=False),
        sa.Column("reusable", sa.Boolean(), nullable=False),
        sa.Column("max_uses", sa.Integer(), nullable=True),
        sa.Column("uses", sa.Integer(), server_default="0", nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("return_url", sa.String(), nullable=True),
        sa.Column("metadata", postgresql.JSONB(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("reference", name=op.f("uq_payment_links_reference")),
        sa.UniqueConstraint("code", name=op.f("uq_payment_links_code")),
        sa.CheckConstraint(
            "uses >= 0 AND (max_uses IS NULL OR uses <= max_uses)",
            name=op.f("ck_payment_links_uses"),
        ),
        sa.CheckConstraint(
            "amount IS NULL OR amount > 0", name=op.f("ck_payment_links_amount_positive")
        ),
    )
    op.create_index(
        "uq_payment_links_external_id",
        "payment_links",
        ["merchant_id", "livemode", "external_id"],
        unique=True,
        postgresql_where=sa.text("external_id IS NOT NULL"),
    )
    op.create_index(
        "ix_payment_links_list", "payment_links", ["merchant_id", "livemode", "created_at"]
    )
    op.create_table(
        "checkout_sessions",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("reference", sa.String(), nullable=False),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("merchant_id", sa.String(), sa.ForeignKey("merchants.id"), nullable=False),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("external_id", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=True),
        sa.Column("currency", sa.String(), nullable=False),
        sa.Column("description", sa.String(), nullable=True),
        sa.Column("return_url", sa.String(), nullable=True),
        sa.Column("callback_url", sa.String(), nullable=True),
        sa.Column("customer", postgresql.JSONB(), nullable=False),
        sa.Column("country", sa.String(), nullable=True),
        sa.Column("operators", postgresql.ARRAY(sa.String()), nullable=True),
        sa.Column("metadata", postgresql.JSONB(), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("payment_id", postgresql.UUID(as_uuid=True), nullable=True),
        sa.Column(
            "plan_id",
            postgresql.UUID(as_uuid=True),
            sa.ForeignKey(
                "installment_plans.id", name=op.f("fk_checkout_sessions_plan_id_installment_plans")
            ),
            nullable=True,
        ),
        sa.Column(
            "payment_link",
            sa.String(),
            sa.ForeignKey(
                "payment_links.reference",
                name=op.f("fk_checkout_sessions_payment_link_payment_links"),
            ),
            nullable=True,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("reference", name=op.f("uq_checkout_sessions_reference")),
        sa.CheckConstraint(
            "status IN ('open', 'complete', 'expired')", name=op.f("ck_checkout_sessions_status")
        ),
        sa.CheckConstraint(
            "(status = 'complete') = (payment_id IS NOT NULL)",
            name=op.f("ck_checkout_sessions_completed_by"),
        ),
        sa.CheckConstraint(
            "amount IS NULL OR amount > 0", name=op.f("ck_checkout_sessions_amount_positive")
        ),
    )
    op.create_index(
        "uq_checkout_sessions_external_id",
        "checkout_sessions",
        ["merchant_id", "livemode", "external_id"],
        unique=True,
        postgresql_where=sa.text("external_id IS NOT NULL"),
    )
    op.create_index(
        "ix_checkout_sessions_list", "checkout_sessions", ["merchant_id", "livemode", "created_at"]
    )
    op.add_column(
        "payments",
        sa.Column(
            "checkout_session",
            sa.String(),
            sa.ForeignKey(
                "checkout_sessions.reference",
                name=op.f("fk_payments_checkout_session_checkout_sessions"),
            ),
            nullable=True,
        ),
    )
    op.add_column(
        "payments",
        sa.Column(
            "payment_link",
            sa.String(),
            sa.ForeignKey(
                "payment_links.reference", name=op.f("fk_payments_payment_link_payment_links")
            ),
            nullable=True,
        ),
    )
    op.create_index(
        "ix_payments_checkout_session",
        "payments",
        ["checkout_session"],
        postgresql_where=sa.text("checkout_session IS NOT NULL"),
    )
    op.create_foreign_key(
        op.f("fk_checkout_sessions_payment_id_payments"),
        "checkout_sessions",
        "payments",
        ["payment_id"],
        ["id"],
    )


def downgrade() -> None:
    op.drop_constraint(op.f("fk_checkout_sessions_payment_id_payments"), "checkout_sessions")
    op.drop_index("ix_payments_checkout_session", table_name="payments")
    op.drop_column("payments", "payment_link")
    op.drop_column("payments", "checkout_session")
    op.drop_table("checkout_sessions")
    op.drop_table("payment_links")
