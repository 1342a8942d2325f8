"""Bulk payouts (issue 28): payout batches, their items in order, and each batched payout's
batch, so that its end can complete the batch.

Revision ID: 0037_payout_batches
Revises: 0036_event_feed
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0037_payout_batches"
down_revision: str | None = "0036_event_feed"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "payout_batches",
        sa.Column("reference", sa.String(), nullable=False),
        sa.Column("merchant_id", sa.String(), nullable=False),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("external_id", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('processing', 'completed')", name=op.f("ck_payout_batches_status")
        ),
        sa.ForeignKeyConstraint(
            ["merchant_id"],
            ["merchants.id"],
            name=op.f("fk_payout_batches_merchant_id_merchants"),
        ),
        sa.PrimaryKeyConstraint("reference", name=op.f("pk_payout_batches")),
    )
    op.create_index(
        "uq_payout_batches_external_id",
        "payout_batches",
        ["merchant_id", "livemode", "external_id"],
        unique=True,
    )
    op.create_index(
        "ix_payout_batches_list", "payout_batches", ["merchant_id", "livemode", "created_at"]
    )
    op.create_table(
        "payout_batch_items",
        sa.Column("batch_reference", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(), nullable=True),
        sa.Column("request", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("payout_reference", sa.String(), nullable=True),
        sa.Column("error", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.CheckConstraint(
            "payout_reference IS NULL OR error IS NULL",
            name=op.f("ck_payout_batch_items_payout_or_error"),
        ),
        sa.ForeignKeyConstraint(
            ["batch_reference"],
            ["payout_batches.reference"],
            name=op.f("fk_payout_batch_items_batch_reference_payout_batches"),
        ),
        sa.ForeignKeyConstraint(
            ["payout_reference"],
            ["payouts.reference"],
            name=op.f("fk_payout_batch_items_payout_reference_payouts"),
        ),
        sa.PrimaryKeyConstraint("batch_reference", "position", name=op.f("pk_payout_batch_items")),
    )
    op.create_index(
        "ix_payout_batch_items_payout_reference",
        "payout_batch_items",
        ["payout_reference"],
        postgresql_where=sa.text("payout_reference IS NOT NULL"),
    )
    # Nullable, no default: added without rewriting the existing payouts.
    op.add_column("payouts", sa.Column("batch_reference", sa.String(), nullable=True))
    # Checked after the migration's transaction has committed (autocommit): the check reads
    # every payout, under a lock that blocks other schema changes only, not the payouts'
    # writes; added NOT VALID, the constraint holds for new rows at once.
    op.create_foreign_key(
        op.f("fk_payouts_batch_reference_payout_batches"),
        "payouts",
        "payout_batches",
        ["batch_reference"],
        ["reference"],
        postgresql_not_valid=True,
    )
    with op.get_context().autocommit_block():
        op.execute(
            "ALTER TABLE payouts VALIDATE CONSTRAINT fk_payouts_batch_reference_payout_batches"
        )


def downgrade() -> None:
    op.drop_constraint(
        op.f("fk_payouts_batch_reference_payout_batches"), "payouts", type_="foreignkey"
    )
    op.drop_column("payouts", "batch_reference")
    op.drop_index("ix_payout_batch_items_payout_reference", table_name="payout_batch_items")
    op.drop_table("payout_batch_items")
    op.drop_index("ix_payout_batches_list", table_name="payout_batches")
    op.drop_index("uq_payout_batches_external_id", table_name="payout_batches")
    op.drop_table("payout_batches")
