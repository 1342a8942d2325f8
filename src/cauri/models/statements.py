from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Identity, Index, Integer, text
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class OperatorStatement(Base):
    """What an operator says it moved through one connector account over a period: its
    statement, imported from the operator's own file or fetched through its API
    (cauri.reconciliation). The same file twice is one statement (`digest`)."""

    __tablename__ = "operator_statements"
    __table_args__ = (
        Index("uq_operator_statements_digest", "connector", "digest", unique=True),
        Index("ix_operator_statements_connector_day", "connector", "first_day"),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    connector: Mapped[str]
    format: Mapped[str]  # the parser that read it (cauri.reconciliation.formats)
    name: Mapped[str]  # the file's name, or the API's statement id
    digest: Mapped[str]  # sha256 of what was read
    # The UTC days its lines fall on.
    first_day: Mapped[date | None]
    last_day: Mapped[date | None]
    lines: Mapped[int] = mapped_column(Integer)
    # Per currency, in minor units, where the operator gives them.
    opening_balances: Mapped[dict[str, int]] = mapped_column(JSONB)
    closing_balances: Mapped[dict[str, int]] = mapped_column(JSONB)
    imported_by: Mapped[str]
    imported_at: Mapped[datetime]


class StatementLine(Base):
    """One movement of an operator's statement, in Cauri's words (cauri.reconciliation.lines):
    the operator's own id for it, the reference Cauri sent if the operator gives it back,
    signed amounts in minor units (money into the operator wallet is positive)."""

    __tablename__ = "statement_lines"
    __table_args__ = (
        Index("ix_statement_lines_statement", "statement_id", "line"),
        Index("ix_statement_lines_reference", "reference"),
        Index("ix_statement_lines_operator_id", "operator_id"),
        Index("ix_statement_lines_at", "at"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    statement_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("operator_statements.id"))
    line: Mapped[int] = mapped_column(
        Integer
    )  # its line in the file (1: the first after the header)
    operator_id: Mapped[str]
    reference: Mapped[str | None]
    kind: Mapped[str]  # collect | disburse | refund | fee | topup | settlement | other
    status: Mapped[str]  # succeeded | failed | pending
    amount: Mapped[int] = mapped_column(BigInteger)
    fee: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str]
    phone_number: Mapped[str | None]
    at: Mapped[datetime]


class Discrepancy(Base):
    """A difference between an operator's statement, Cauri's operations and the ledger,
    found by a reconciliation run, kept until a person resolves it (or a later run finds it
    gone). One per connector, day, kind and what it is about (`about`)."""

    __tablename__ = "discrepancies"
    __table_args__ = (
        Index("uq_discrepancies_about", "connector", "day", "kind", "about", unique=True),
        Index("ix_discrepancies_open", "found_at", postgresql_where=text("resolved_at IS NULL")),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    connector: Mapped[str]
    day: Mapped[date]
    kind: Mapped[str]  # cauri.reconciliation.kinds
    about: Mapped[str]  # `line:<id>`, `operation:<id>` or `balance:<currency>`
    line_id: Mapped[int | None] = mapped_column(ForeignKey("statement_lines.id"))
    operation_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    currency: Mapped[str | None]
    # What each side says (amounts in minor units, statuses, references).
    details: Mapped[dict[str, Any]] = mapped_column(JSONB)
    found_at: Mapped[datetime]
    resolved_at: Mapped[datetime | None]
    resolved_by: Mapped[str | None]
    resolution: Mapped[str | None]
