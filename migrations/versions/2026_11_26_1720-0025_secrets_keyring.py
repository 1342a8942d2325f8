"""Webhook signing secrets encrypted at rest (issue 23)

A new column holds the secret sealed with the keyring (cauri.merchants.webhook_secrets);
`secret` may now be empty, and exactly one of the two is set. The rows written before keep
their secret in clear: a migration cannot count on CAURI_SECRET_KEY being in its
environment (nor should it carry the application's cryptography), so `cauri migrate` and
`cauri serve`, when the key is set, and `cauri secrets rotate` seal them afterwards;
meanwhile deliveries read either. Nothing writes a secret in clear any more.

Revision ID: 0025_secrets_keyring
Revises: 0023_money_approvals
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025_secrets_keyring"
down_revision: str | None = "0023_money_approvals"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("webhook_endpoints", sa.Column("sealed_secret", sa.LargeBinary()))
    op.alter_column("webhook_endpoints", "secret", nullable=True)
    op.create_check_constraint(
        "webhook_endpoints_one_secret",
        "webhook_endpoints",
        "num_nonnulls(secret, sealed_secret) = 1",
    )


def downgrade() -> None:
    # A sealed secret cannot be read back without the key: refuse rather than lose it.
    op.execute(
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM webhook_endpoints WHERE secret IS NULL) THEN "
        "RAISE EXCEPTION 'webhook secrets are sealed: they cannot go back in clear'; "
        "END IF; END $$"
    )
    op.drop_constraint("webhook_endpoints_one_secret", "webhook_endpoints")
    op.alter_column("webhook_endpoints", "secret", nullable=False)
    op.drop_column("webhook_endpoints", "sealed_secret")
