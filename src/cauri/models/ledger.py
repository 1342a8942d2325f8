from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, ForeignKeyConstraint, Index, String, text
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class LedgerAccount(Base):
    """The lockable head of an account: its balance folded so far (DESIGN invariant 3).

    Credits never touch this row; a debit locks it, folds the unfolded postings into
    `balance`, checks, and appends.
    """

    __tablename__ = "ledger_accounts"

    code: Mapped[str] = mapped_column(String, primary_key=True)
    currency: Mapped[str]
    livemode: Mapped[bool]
    allow_negative: Mapped[bool] = mapped_column(Boolean)
    balance: Mapped[int] = mapped_column(BigInteger, server_default="0")


class LedgerTransaction(Base):
    __tablename__ = "ledger_transactions"
    # A resource's money (the staff's detail pages, exports' settlement dates): its
    # transactions carry its reference (a payment's or plan's id, a payout's or refund's).
    # By time (statements, balance transactions): the ids of a period, read off the index.
    __table_args__ = (
        Index("ix_ledger_transactions_reference", "reference"),
        Index("ix_ledger_transactions_created_at", "created_at", postgresql_include=["id"]),
        # What the postings' foreign key names (their partition key is the instant).
        Index("uq_ledger_transactions_id_created_at", "id", "created_at", unique=True),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    kind: Mapped[str]
    reference: Mapped[str | None]
    livemode: Mapped[bool]
    created_at: Mapped[datetime]


class LedgerPosting(Base):
    """Append-only in the database (migration 0022): only `folded` ever changes, and a
    transaction whose postings do not sum to zero per currency is refused at its commit."""

    __tablename__ = "ledger_postings"
    __table_args__ = (
        # An account's postings in the order written, their amounts in the index: a
        # statement sums a period of them without reading the table.
        Index(
            "ix_ledger_postings_account_transaction",
            "account",
            "transaction_id",
            postgresql_include=["amount"],
        ),
        Index("ix_ledger_postings_unfolded", "account", postgresql_where=text("NOT folded")),
        # What merchants owe (cauri.ledger.holdings.receivables), without reading the ledger.
        Index(
            "ix_ledger_postings_receivable",
            "account",
            postgresql_include=["currency", "amount"],
            postgresql_where=text("account LIKE 'merchant:%:receivable:%'"),
        ),
        Index("ix_ledger_postings_transaction", "transaction_id"),
        # The transaction's instant: its postings are in its month's partition.
        ForeignKeyConstraint(
            ["transaction_id", "created_at"],
            ["ledger_transactions.id", "ledger_transactions.created_at"],
        ),
    )
    # Partitioned by month (migration 0041): the table's key holds its partition key, the
    # ORM's identity is the id alone.
    __mapper_args__ = {"primary_key": ["id"]}  # noqa: RUF012 (SQLAlchemy's declaration)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    transaction_id: Mapped[int] = mapped_column(BigInteger)
    # The account code, not a foreign key: credits must not need the account row to exist.
    account: Mapped[str]
    currency: Mapped[str]
    amount: Mapped[int] = mapped_column(BigInteger)
    folded: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    created_at: Mapped[datetime] = mapped_column(primary_key=True)


class LedgerPeriod(Base):
    """A month closed (migration 0042): its postings folded into account heads and its
    partition closed to new ones; `archived_at` once its postings left (`cauri archive`)."""

    __tablename__ = "ledger_periods"

    month: Mapped[date] = mapped_column(primary_key=True)  # its first day
    closed_at: Mapped[datetime]
    archived_at: Mapped[datetime | None]


class LedgerCarried(Base):
    """What an account's postings up to the end of a closed month add up to."""

    __tablename__ = "ledger_carried"

    month: Mapped[date] = mapped_column(ForeignKey("ledger_periods.month"), primary_key=True)
    account: Mapped[str] = mapped_column(primary_key=True)
    currency: Mapped[str]
    amount: Mapped[int] = mapped_column(BigInteger)
