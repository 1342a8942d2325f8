"""People who sign in: the payment company's staff (to the console) and merchants' team
members (to the dashboard). One table and one set of mechanics serve both (cauri.people);
the realm says which pages an account opens, and a session or a link of one realm is never
valid in the other."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, LargeBinary, String
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.orm import Mapped, mapped_column

from cauri.models.base import Base

STAFF = "staff"
MERCHANT = "merchant"
STAFF_ROLES = ("admin", "finance", "support", "viewer")
MERCHANT_ROLES = ("owner", "developer", "finance", "viewer")


def _quoted(roles: tuple[str, ...]) -> str:
    return ", ".join(f"'{role}'" for role in roles)


class User(Base):
    """A person who signs in: staff (`cauri staff create`; `merchant_id` None) or a member
    of one merchant's team (`cauri merchants invite`). The email is kept lower-case and is
    unique within its realm, so that it is unique whatever the case it is typed in; one
    address may be staff and a merchant's member, as two accounts."""

    __tablename__ = "users"
    __table_args__ = (
        CheckConstraint(
            f"(realm = 'staff' AND merchant_id IS NULL AND role IN ({_quoted(STAFF_ROLES)})) "
            f"OR (realm = 'merchant' AND merchant_id IS NOT NULL "
            f"AND role IN ({_quoted(MERCHANT_ROLES)}))",
            name="realm_role",
        ),
        CheckConstraint("email = lower(email)", name="email_lower_case"),
        Index("uq_users_realm_email", "realm", "email", unique=True),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    realm: Mapped[str] = mapped_column(String, server_default=STAFF)
    merchant_id: Mapped[str | None] = mapped_column(
        ForeignKey("merchants.id", ondelete="CASCADE"), index=True
    )
    email: Mapped[str]
    role: Mapped[str]
    # Argon2id (cauri.people.passwords); None until set from a one-time link or the CLI.
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


class UserSession(Base):
    """A signed-in browser. Its cookie holds a random token; only the token's SHA-256 is
    kept. `pending` names the step still owed before the session opens its pages (`totp`:
    the code of an enrolled account; `enroll`: the enrollment of one that must have TOTP);
    None once it does."""

    __tablename__ = "user_sessions"
    __table_args__ = (CheckConstraint("pending IN ('totp', 'enroll')", name="pending"),)

    token_hash: Mapped[str] = mapped_column(String, primary_key=True)
    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    pending: Mapped[str | None]
    # The synchronizer token of every form the session posts.
    csrf_token: Mapped[str]
    ip: Mapped[str]
    created_at: Mapped[datetime]
    last_seen_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class SignInLink(Base):
    """A one-time link to the realm's welcome page, where the person sets a password (and
    enrolls TOTP). Only the token's SHA-256 is kept."""

    __tablename__ = "sign_in_links"

    token_hash: Mapped[str] = mapped_column(String, primary_key=True)
    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class SignInAttempt(Base):
    """One password or code checked at sign-in, for the throttle (cauri.people.throttle):
    counted per realm and email typed (an unknown one too) and per client address, across
    every server process."""

    __tablename__ = "sign_in_attempts"
    __table_args__ = (
        Index("ix_sign_in_attempts_email_at", "realm", "email", "at"),
        Index("ix_sign_in_attempts_ip_at", "ip", "at"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    realm: Mapped[str] = mapped_column(String, server_default=STAFF)
    email: Mapped[str]
    ip: Mapped[str]
    at: Mapped[datetime]
    succeeded: Mapped[bool]
