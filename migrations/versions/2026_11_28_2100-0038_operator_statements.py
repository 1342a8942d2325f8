"""Reconciliation against the operators (issue 28): their statements, line by line, and
the discrepancies a run finds between them, Cauri's operations and the ledger. An index on
operations by the operator's own id, by connector and time, and by the payment a refund
refunds, built without blocking writes: what a day's matching reads them by.

Revision ID: 0038_operator_statements
Revises: 0037_payout_batches
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0038_operator_statements"
down_revision: str | None = "0037_payout_batches"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "operator_statements",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("connector", sa.String(), nullable=False),
        sa.Column("format", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("digest", sa.String(), nullable=False),
        sa.Column("first_day", sa.Date(), nullable=True),
        sa.Column("last_day", sa.Date(), nullable=True),
        sa.Column("lines", sa.Integer(), nullable=False),
        sa.Column("opening_balances", postgresql.JSONB(), nullable=False),
        sa.Column("closing_balances", postgresql.JSONB(), nullable=False),
        sa.Column("imported_by", sa.String(), nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "uq_operator_statements_digest", "operator_statements", ["connector", "digest"], unique=True
    )
    op.create_index(
        "ix_operator_statements_connector_day", "operator_statements", ["connector", "first_day"]
    )
    op.create_table(
        "statement_lines",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column(
            "statement_id",
            postgresql.UUID(as_uuid=True),
            sa.ForeignKey("operator_statements.id"),
            nullable=False,
        ),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("operator_id", sa.String(), nullable=False),
        sa.Column("reference", sa.String(), nullable=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("fee", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(), nullable=False),
        sa.Column("phone_number", sa.String(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_statement_lines_statement", "statement_lines", ["statement_id", "line"])
    op.create_index("ix_statement_lines_reference", "statement_lines", ["reference"])
    op.create_index("ix_statement_lines_operator_id", "statement_lines", ["operator_id"])
    op.create_index("ix_statement_lines_at", "statement_lines", ["at"])
    op.create_table(
        "discrepancies",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column("connector", sa.String(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("about", sa.String(), nullable=False),
        sa.Column("line_id", sa.BigInteger(), sa.ForeignKey("statement_lines.id"), nullable=True),
        sa.Column("operation_id", postgresql.UUID(as_uuid=True), nullable=True),
        sa.Column("currency", sa.String(), nullable=True),
        sa.Column("details", postgresql.JSONB(), nullable=False),
        sa.Column("found_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resolved_by", sa.String(), nullable=True),
        sa.Column("resolution", sa.String(), nullable=True),
    )
    op.create_index(
        "uq_discrepancies_about",
        "discrepancies",
        ["connector", "day", "kind", "about"],
        unique=True,
    )
    op.create_index(
        "ix_discrepancies_open",
        "discrepancies",
        ["found_at"],
        postgresql_where=sa.text("resolved_at IS NULL"),
    )
    # The daily reconciliation acts as the worker in the audit log.
    op.execute("ALTER TABLE audit_log DROP CONSTRAINT ck_audit_log_actor_kind")
    op.execute(
        "ALTER TABLE audit_log ADD CONSTRAINT ck_audit_log_actor_kind "
        "CHECK (actor_kind IN ('staff', 'cli', 'member', 'worker'))"
    )
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS ix_operator_operations_operator_reference "
            "ON operator_operations (connector, operator_reference) "
            "WHERE operator_reference IS NOT NULL"
        )
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS ix_operator_operations_connector_created "
            "ON operator_operations (connector, created_at)"
        )
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS ix_operator_operations_refund_of "
            "ON operator_operations ((request ->> 'refund_of')) WHERE action = 'refund'"
        )


def downgrade() -> None:
    op.execute("ALTER TABLE audit_log DROP CONSTRAINT ck_audit_log_actor_kind")
    op.execute(
        "ALTER TABLE audit_log ADD CONSTRAINT ck_audit_log_actor_kind "
        "CHECK (actor_kind IN ('staff', 'cli', 'member'))"
    )
    op.execute("DROP INDEX IF EXISTS ix_operator_operations_refund_of")
    op.execute("DROP INDEX IF EXISTS ix_operator_operations_connector_created")
    op.execute("DROP INDEX IF EXISTS ix_operator_operations_operator_reference")
    op.drop_table("discrepancies")
    op.drop_table("statement_lines")
    op.drop_table("operator_statements")
