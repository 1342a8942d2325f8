"""the audit log as a hash chain (issue 23): its owner may drop the append-only trigger

- audit_log.previous_hash, audit_log.chain_hash: each entry's hash is SHA-256 of its
  predecessor's hash followed by its canonical form (cauri.audit.chain); the entries already
  written are chained here, in id order. `previous_hash` is unique: the chain never forks.

Revision ID: 0026_audit_chain
Revises: 0025_secrets_keyring
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from cauri.audit import chain
from cauri.models import AuditEntry

revision: str = "0026_audit_chain"
down_revision: str | None = "0025_secrets_keyring"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("previous_hash", "chain_hash")
_AUDIT_LOG = sa.table(
    "audit_log",
    sa.column("id", sa.BigInteger()),
    sa.column("at", sa.DateTime(timezone=True)),
    sa.column("actor_kind", sa.String()),
    sa.column("actor_name", sa.String()),
    sa.column("staff_account_id", postgresql.UUID(as_uuid=True)),
    sa.column("action", sa.String()),
    sa.column("resource_type", sa.String()),
    sa.column("resource_id", sa.String()),
    sa.column("reason", sa.String()),
    sa.column("before", postgresql.JSONB()),
    sa.column("after", postgresql.JSONB()),
    sa.column("previous_hash", sa.String()),
    sa.column("chain_hash", sa.String()),
)
_CANONICAL = [column for column in _AUDIT_LOG.c if column.name not in _COLUMNS]


def upgrade() -> None:
    for column in _COLUMNS:
        op.add_column("audit_log", sa.Column(column, sa.String(), nullable=True))
    # The one change the trigger lets through, made by the owner, in this transaction.
    op.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_change")
    _chain_existing_entries()
    op.execute("ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_change")
    for column in _COLUMNS:
        op.alter_column("audit_log", column, nullable=False)
    op.create_unique_constraint(op.f("uq_audit_log_previous_hash"), "audit_log", ["previous_hash"])


def _chain_existing_entries() -> None:
    # Hashed with the canonical form the application verifies with: the same code, not a
    # copy, given the columns this revision knows (not the model's, which will grow).
    connection = op.get_bind()
    previous_hash = chain.GENESIS
    # Read whole first (staff actions: thousands of rows, not millions): an update on the
    # connection would end a streaming read.
    rows = connection.execute(sa.select(*_CANONICAL).order_by(_CANONICAL[0])).mappings().all()
    for row in rows:
        entry_hash = chain.entry_hash(previous_hash, AuditEntry(**row))
        connection.execute(
            _AUDIT_LOG.update()
            .where(_AUDIT_LOG.c.id == row["id"])
            .values(previous_hash=previous_hash, chain_hash=entry_hash)
        )
        previous_hash = entry_hash


def downgrade() -> None:
    op.drop_constraint(op.f("uq_audit_log_previous_hash"), "audit_log", type_="unique")
    for column in _COLUMNS:
        op.drop_column("audit_log", column)
