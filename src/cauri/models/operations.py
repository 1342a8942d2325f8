from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, Integer, String, text
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class OperatorOperation(Base):
    """One request to an operator's network, recorded (and committed) before it is sent
    (cauri.calls): a collection, a disbursement or a refund, for one subject (a payment, a
    payout, a refund, a plan's cancellation refund). Its id is the idempotency reference the
    operator is sent, so a re-send is never a second request. Its status is final once: the
    first answer that settles it (the call, a poll, a verified callback) wins."""

    __tablename__ = "operator_operations"
    __table_args__ = (
        CheckConstraint("status IN ('pending', 'succeeded', 'failed')", name="status"),
        # One request per subject and action: a job run twice never sends twice.
        Index("uq_operator_operations_subject", "subject", "subject_ref", "action", unique=True),
        Index(
            "ix_operator_operations_review",
            "review_required_at",
            postgresql_where=text("review_required_at IS NOT NULL AND status = 'pending'"),
        ),
        # A statement line that gives only the operator's own id (cauri.reconciliation).
        Index(
            "ix_operator_operations_operator_reference",
            "connector",
            "operator_reference",
            postgresql_where=text("operator_reference IS NOT NULL"),
        ),
        # A connector's operations of a day (cauri.reconciliation).
        Index("ix_operator_operations_connector_created", "connector", "created_at"),
        # A refund's line that gives the payment's reference (Wave).
        Index(
            "ix_operator_operations_refund_of",
            text("(request ->> 'refund_of')"),
            postgresql_where=text("action = 'refund'"),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    livemode: Mapped[bool]
    connector: Mapped[str]  # the connector account's name
    operator: Mapped[str]  # the catalogue operator code
    action: Mapped[str]  # collect | disburse | refund
    subject: Mapped[str]  # payment | payout | refund | plan_refund
    subject_ref: Mapped[str]
    # The Collection or Disbursement sent, to ask its status and to send it again.
    request: Mapped[dict[str, Any]] = mapped_column(JSONB)
    status: Mapped[str] = mapped_column(String, server_default="pending")
    # Whether the request has been handed to the network at least once.
    sent: Mapped[bool] = mapped_column(server_default=text("false"))
    operator_reference: Mapped[str | None]
    reason: Mapped[str | None]
    polls: Mapped[int] = mapped_column(Integer, server_default="0")
    # Set when the poll schedule ran out with the outcome still unknown: staff must look.
    review_required_at: Mapped[datetime | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    settled_at: Mapped[datetime | None]


class OperatorExchange(Base):
    """Every HTTP exchange with an operator, secrets removed: what was sent, what came back,
    how long it took, what went wrong. Notifications the operator sent us are recorded too
    (action `callback`), including those about no request of ours (operation_id null)."""

    __tablename__ = "operator_exchanges"
    __table_args__ = (
        Index("ix_operator_exchanges_operation", "operation_id", "id"),
        # The recent exchanges of a connector: its routes' availability (cauri.calls).
        Index("ix_operator_exchanges_connector_created", "connector", "created_at"),
    )
    # Partitioned by month (migration 0041): the table's key holds its partition key, the
    # ORM's identity is the id alone.
    __mapper_args__ = {"primary_key": ["id"]}  # noqa: RUF012 (SQLAlchemy's declaration)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    operation_id: Mapped[uuid.UUID | None] = mapped_column(
        UUID(as_uuid=True), ForeignKey("operator_operations.id")
    )
    connector: Mapped[str]
    action: Mapped[str]
    method: Mapped[str]
    url: Mapped[str]
    request_body: Mapped[str | None]
    response_status: Mapped[int | None]
    response_body: Mapped[str | None]
    duration_ms: Mapped[int] = mapped_column(Integer)
    error: Mapped[str | None]
    created_at: Mapped[datetime] = mapped_column(primary_key=True)
