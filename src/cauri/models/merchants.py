from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Identity,
    Index,
    Integer,
    LargeBinary,
    Numeric,
    String,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base

MERCHANT_STATUSES = ("active", "kyc_pending", "suspended")


class Merchant(Base):
    __tablename__ = "merchants"
    __table_args__ = (
        CheckConstraint("status IN ('active', 'kyc_pending', 'suspended')", name="status"),
        CheckConstraint("fee_bearer IN ('customer', 'merchant')", name="fee_bearer"),
    )

    id: Mapped[str] = mapped_column(String, primary_key=True)
    name: Mapped[str]
    status: Mapped[str]
    payout_phone: Mapped[str | None]
    payout_operator: Mapped[str | None]
    payout_validated: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    limit_per_payout: Mapped[int | None] = mapped_column(BigInteger)
    limit_daily: Mapped[int | None] = mapped_column(BigInteger)
    approval_threshold: Mapped[int | None] = mapped_column(BigInteger)
    # Set by the merchant's owner on the dashboard: a live payout asked there above it is a
    # draft until a second member approves it (cauri.team.drafts); None: never.
    team_approval_above: Mapped[int | None] = mapped_column(BigInteger)
    # Set by the team on the dashboard (cauri.team.settings): shown to its customers on the
    # checkout pages. The logo is a PNG Cauri re-encoded from the image sent.
    support_email: Mapped[str | None]
    # Deferred: read by its own route only, never with the row on the hot paths.
    logo: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    logo_updated_at: Mapped[datetime | None]
    # A payout account the team asked for, until the staff validate it (or another one).
    payout_request_phone: Mapped[str | None]
    payout_request_operator: Mapped[str | None]
    payout_requested_at: Mapped[datetime | None]
    payout_requested_by: Mapped[str | None]
    # Who pays a payment's fee (`cauri merchants set-fee-bearer`): see Payment.fee_bearer.
    fee_bearer: Mapped[str] = mapped_column(String, server_default="customer")
    created_at: Mapped[datetime]


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id", ondelete="CASCADE"))
    livemode: Mapped[bool]
    key_hash: Mapped[str] = mapped_column(String, unique=True)
    key_hint: Mapped[str]
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    created_at: Mapped[datetime]


class FeeRule(Base):
    """One account's contract for one payment mode (an operator code) or for `payout`: a whole
    rule, which replaces the platform's defaults entirely. Fixed amounts as on
    `PlatformSettings`: `fixed` in XOF (XAF at par), `fixed_eur` and `fixed_usd` in cents."""

    __tablename__ = "fee_rules"

    merchant_id: Mapped[str] = mapped_column(
        ForeignKey("merchants.id", ondelete="CASCADE"), primary_key=True
    )
    mode: Mapped[str] = mapped_column(String, primary_key=True)
    percent: Mapped[Decimal] = mapped_column(Numeric(7, 4))
    fixed: Mapped[int] = mapped_column(BigInteger)
    fixed_eur: Mapped[int] = mapped_column(BigInteger, server_default="0")
    fixed_usd: Mapped[int] = mapped_column(BigInteger, server_default="0")
    disabled: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))


class ApiError(Base):
    """A refusal of the API to a request made with one of the merchant's keys: what its
    developers see on the dashboard (method, route template, status, error code, when;
    never a body, a header or a path with its references). The latest `KEPT` per account
    and environment are kept (cauri.merchants.api_errors)."""

    __tablename__ = "api_errors"
    __table_args__ = (Index("ix_api_errors_latest", "merchant_id", "livemode", "id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    merchant_id: Mapped[str] = mapped_column(ForeignKey("merchants.id", ondelete="CASCADE"))
    livemode: Mapped[bool]
    method: Mapped[str]
    route: Mapped[str]
    status: Mapped[int] = mapped_column(Integer)
    code: Mapped[str]
    at: Mapped[datetime]
