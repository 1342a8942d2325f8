from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, LargeBinary, String
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base

STAFF_ROLES = ("admin", "finance", "support", "viewer")


class StaffAccount(Base):
    """A person of the payment company who signs in to the console (`cauri staff create`).
    The email is kept lower-case, so that it is unique whatever the case it is typed in."""

    __tablename__ = "staff_accounts"
    __table_args__ = (
        CheckConstraint("role IN ('admin', 'finance', 'support', 'viewer')", name="role"),
        CheckConstraint("email = lower(email)", name="email_lower_case"),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    email: Mapped[str] = mapped_column(String, unique=True)
    role: Mapped[str]
    # Argon2id (cauri.staff.passwords); None until set from a one-time link or the CLI.
    password_hash: Mapped[str | None]
    # The TOTP secret, encrypted with CAURI_SECRET_KEY (cauri.connectors.secrets). Set when
    # enrollment begins; in use once totp_enabled_at is set.
    totp_secret: Mapped[bytes | None] = mapped_column(LargeBinary)
    totp_enabled_at: Mapped[datetime | None]
    # The time step of the last code accepted: a code is never taken twice (RFC 6238 5.2).
    totp_last_step: Mapped[int | None] = mapped_column(BigInteger)
    disabled_at: Mapped[datetime | None]
    created_at: Mapped[datetime]
    last_sign_in_at: Mapped[datetime | None]


class StaffSession(Base):
    """A signed-in browser. Its cookie holds a random token; only the token's SHA-256 is
    kept. `pending` names the step still owed before the session opens the console
    (`totp`: the code of an enrolled account; `enroll`: the enrollment of one that must
    have TOTP); None once it does."""

    __tablename__ = "staff_sessions"
    __table_args__ = (CheckConstraint("pending IN ('totp', 'enroll')", name="pending"),)

    token_hash: Mapped[str] = mapped_column(String, primary_key=True)
    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("staff_accounts.id", ondelete="CASCADE"), index=True
    )
    pending: Mapped[str | None]
    # The synchronizer token of every form the session posts.
    csrf_token: Mapped[str]
    ip: Mapped[str]
    created_at: Mapped[datetime]
    last_seen_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class StaffSignInLink(Base):
    """A one-time link to `/console/welcome/<token>`, where the person sets a password (and
    enrolls TOTP). Only the token's SHA-256 is kept."""

    __tablename__ = "staff_sign_in_links"

    token_hash: Mapped[str] = mapped_column(String, primary_key=True)
    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("staff_accounts.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class StaffSignInAttempt(Base):
    """One password or code checked at sign-in, for the throttle (cauri.staff.throttle):
    counted per email typed (an unknown one too) and per client address, across every
    server process."""

    __tablename__ = "staff_sign_in_attempts"
    __table_args__ = (
        Index("ix_staff_sign_in_attempts_email_at", "email", "at"),
        Index("ix_staff_sign_in_attempts_ip_at", "ip", "at"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    email: Mapped[str]
    ip: Mapped[str]
    at: Mapped[datetime]
    succeeded: Mapped[bool]
