from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Identity, Index, Integer
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class Reconciliation(Base):
    """One run of the ledger's reconciliation check (`cauri ledger check`, the console's
    ledger page): what it covered, how many discrepancies of each kind it found, and the
    first of them (cauri.staff.reconciliation). Kept, so that the staff see when the ledger
    last reconciled."""

    __tablename__ = "reconciliations"
    __table_args__ = (Index("ix_reconciliations_checked_at", "checked_at"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    checked_at: Mapped[datetime]
    duration_ms: Mapped[int] = mapped_column(Integer)
    passed: Mapped[bool]
    transactions: Mapped[int] = mapped_column(BigInteger)
    postings: Mapped[int] = mapped_column(BigInteger)
    accounts: Mapped[int] = mapped_column(BigInteger)
    # Per check (`unbalanced`, `stale_head`, `negative`): how many it found in all.
    counts: Mapped[dict[str, int]] = mapped_column(JSONB)
    # The first discrepancies of each check, as cauri.ledger.reconciliation names them.
    discrepancies: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
