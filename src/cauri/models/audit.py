from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, Identity, Index, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base

ACTOR_KINDS = ("staff", "cli")


class AuditEntry(Base):
    """One action of the staff (console) or of the CLI, with the state it changed before and
    after it, secrets left out (cauri.audit). Append-only: a trigger of the migration refuses
    UPDATE, DELETE and TRUNCATE, for this application and for anyone but the table's owner
    or a superuser; the hash chain (cauri.audit.chain) shows what they did."""

    __tablename__ = "audit_log"
    __table_args__ = (
        CheckConstraint("actor_kind IN ('staff', 'cli', 'member', 'worker')", name="actor_kind"),
        Index("ix_audit_log_at", "at", "id"),
        Index("ix_audit_log_actor", "actor_name", "at"),
        Index("ix_audit_log_action", "action", "at"),
        Index("ix_audit_log_resource", "resource_type", "resource_id", "at"),
        # No two entries follow the same one: the chain never forks.
        UniqueConstraint("previous_hash"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    at: Mapped[datetime]
    actor_kind: Mapped[str]
    # The staff member's email, or `cli:<os user>`, as it was when they acted.
    actor_name: Mapped[str]
    # No foreign key: the entry outlives any change to the staff accounts.
    staff_account_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    action: Mapped[str] = mapped_column(String)
    resource_type: Mapped[str]
    resource_id: Mapped[str]
    # None (SQL NULL): the resource did not exist before, or no longer exists after.
    before: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))
    after: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))
    reason: Mapped[str | None]
    # The chain (cauri.audit.chain): the predecessor's hash, and this entry's.
    previous_hash: Mapped[str]
    chain_hash: Mapped[str]
