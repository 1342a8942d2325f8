from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import BigInteger, CheckConstraint, Integer, Numeric, text
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base


class PlatformSettings(Base):
    """The platform-wide settings an operator changes with `cauri settings set`; one row.

    Fixed amounts: the unsuffixed column in XOF, which XAF shares at par; the `_eur` and
    `_usd` ones in cents of their currency (DESIGN: fixed fees)."""

    __tablename__ = "platform_settings"
    __table_args__ = (
        CheckConstraint("id = 1", name="single_row"),
        CheckConstraint(
            "plan_creation_fee_percent IS NULL OR (plan_creation_fee_fixed IS NULL "
            "AND plan_creation_fee_fixed_eur IS NULL AND plan_creation_fee_fixed_usd IS NULL)",
            name="plan_fee_fixed_or_percent",
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, server_default=text("1"))
    plan_creation_fee_fixed: Mapped[int | None] = mapped_column(BigInteger)
    plan_creation_fee_fixed_eur: Mapped[int | None] = mapped_column(BigInteger)
    plan_creation_fee_fixed_usd: Mapped[int | None] = mapped_column(BigInteger)
    plan_creation_fee_percent: Mapped[Decimal | None] = mapped_column(Numeric(7, 4))
    plan_penalty_percent: Mapped[Decimal] = mapped_column(Numeric(7, 4), server_default="0")
    fee_percent: Mapped[Decimal] = mapped_column(Numeric(7, 4), server_default="0")
    fee_fixed: Mapped[int] = mapped_column(BigInteger, server_default="0")
    fee_fixed_eur: Mapped[int] = mapped_column(BigInteger, server_default="0")
    fee_fixed_usd: Mapped[int] = mapped_column(BigInteger, server_default="0")
    payout_fee_percent: Mapped[Decimal] = mapped_column(Numeric(7, 4), server_default="0")
    payout_fee_fixed: Mapped[int] = mapped_column(BigInteger, server_default="0")
    payout_fee_fixed_eur: Mapped[int] = mapped_column(BigInteger, server_default="0")
    payout_fee_fixed_usd: Mapped[int] = mapped_column(BigInteger, server_default="0")
    # Maker-checker: a held payout whose amount is above this needs two different people's
    # approvals (`cauri payouts approve`); unset, one approval pays any held payout.
    payout_dual_approval_above: Mapped[int | None] = mapped_column(BigInteger)
    payout_dual_approval_above_eur: Mapped[int | None] = mapped_column(BigInteger)
    payout_dual_approval_above_usd: Mapped[int | None] = mapped_column(BigInteger)
    updated_at: Mapped[datetime | None]
