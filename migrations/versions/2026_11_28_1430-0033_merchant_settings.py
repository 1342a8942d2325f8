"""A merchant's settings from its dashboard: support email, logo, a payout account asked for
until the staff validate it (issue 26)

Revision ID: 0033_merchant_settings
Revises: 0032_api_errors
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0033_merchant_settings"
down_revision: str | None = "0032_api_errors"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    ("support_email", sa.String()),
    ("logo", sa.LargeBinary()),
    ("logo_updated_at", sa.DateTime(timezone=True)),
    ("payout_request_phone", sa.String()),
    ("payout_request_operator", sa.String()),
    ("payout_requested_at", sa.DateTime(timezone=True)),
    ("payout_requested_by", sa.String()),
)


def upgrade() -> None:
    for name, type_ in COLUMNS:
        op.add_column("merchants", sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    for name, _ in reversed(COLUMNS):
        op.drop_column("merchants", name)
