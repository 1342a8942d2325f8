"""plan_refunds: a cancelled plan's refund is a disbursement row, like payouts and refunds
(cauri.disbursements.lifecycle), debited from the escrow when sent

Revision ID: 0011_plan_refunds
Revises: 0010_connectors

The refunds in flight (a cancelling plan whose refund to a Mobile Money number has started)
become pending rows with `debited = false`: the lifecycle before this one debited the escrow
only when the operator confirmed, so their money is still in escrow; they are debited when
they succeed (cauri.plans.settlement, `_finish`). What pointed at them by plan id now points
at their row: the queued `plans.refund_status` jobs (payload `{"reference": ...}` instead of
`{"plan_id": ...}`) and their operator operations (`subject_ref`).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_plan_refunds"
down_revision: str | None = "0010_connectors"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TS = sa.DateTime(timezone=True)

# prf_ and 24 hex digits, the shape of cauri.kit.ids.prefixed("prf").
_CARRY_IN_FLIGHT = """
INSERT INTO plan_refunds (reference, plan_id, merchant_id, livemode, status, amount, currency,
                          operator, phone_number, debited, created_at, updated_at)
SELECT 'prf_' || substr(replace(CAST(gen_random_uuid() AS text), '-', ''), 1, 24),
       id, merchant_id, livemode, 'pending', refund_amount, currency,
       refund_operator, refund_phone_number, false, updated_at, updated_at
FROM installment_plans
WHERE status = 'pending' AND cancelled_at IS NOT NULL AND refund_amount > 0
  AND refund_phone_number IS NOT NULL AND refund_operator IS NOT NULL
"""

_REKEY_JOBS = """
UPDATE jobs SET payload = jsonb_build_object('reference', r.reference)
FROM plan_refunds r
WHERE jobs.kind = 'plans.refund_status' AND jobs.payload->>'plan_id' = CAST(r.plan_id AS text)
"""

# A job about a plan with no refund in flight had nothing left to do under the old code either.
_DROP_IDLE_JOBS = """
DELETE FROM jobs
WHERE kind = 'plans.refund_status' AND payload ? 'plan_id' AND status IN ('queued', 'running')
"""

_REKEY_OPERATIONS = """
UPDATE operator_operations SET subject_ref = r.reference
FROM plan_refunds r
WHERE subject = 'plan_refund' AND subject_ref = CAST(r.plan_id AS text)
"""


def upgrade() -> None:
    op.create_table(
        "plan_refunds",
        sa.Column("reference", sa.String(), nullable=False),
        sa.Column(
            "plan_id",
            sa.UUID(),
            sa.ForeignKey(
                "installment_plans.id", name=op.f("fk_plan_refunds_plan_id_installment_plans")
            ),
            nullable=False,
        ),
        sa.Column(
            "merchant_id",
            sa.String(),
            sa.ForeignKey("merchants.id", name=op.f("fk_plan_refunds_merchant_id_merchants")),
            nullable=False,
        ),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(), nullable=False),
        sa.Column("operator", sa.String(), nullable=False),
        sa.Column("phone_number", sa.String(), nullable=False),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("debited", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("operator_reference", sa.String(), nullable=True),
        sa.Column("failure_reason", sa.String(), nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.Column("completed_at", _TS, nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'succeeded', 'failed')", name=op.f("ck_plan_refunds_status")
        ),
        sa.PrimaryKeyConstraint("reference", name=op.f("pk_plan_refunds")),
    )
    op.create_index(
        "uq_plan_refunds_plan_id",
        "plan_refunds",
        ["plan_id"],
        unique=True,
        postgresql_where=sa.text("status <> 'failed'"),
    )
    op.execute(_CARRY_IN_FLIGHT)
    op.execute(_REKEY_JOBS)
    op.execute(_DROP_IDLE_JOBS)
    op.execute(_REKEY_OPERATIONS)


def downgrade() -> None:
    # The old lifecycle debits at confirmation: a pending row already debited would be
    # debited twice by it. Finish those first.
    in_flight = op.get_bind().scalar(
        sa.text("SELECT count(*) FROM plan_refunds WHERE status = 'pending' AND debited")
    )
    if in_flight:
        raise RuntimeError(f"{in_flight} plan refunds are in flight and debited: finish them first")
    op.execute(
        "UPDATE jobs SET payload = jsonb_build_object('plan_id', CAST(r.plan_id AS text)) "
        "FROM plan_refunds r "
        "WHERE jobs.kind = 'plans.refund_status' AND jobs.payload->>'reference' = r.reference"
    )
    op.execute(
        "UPDATE operator_operations SET subject_ref = CAST(r.plan_id AS text) "
        "FROM plan_refunds r WHERE subject = 'plan_refund' AND subject_ref = r.reference"
    )
    op.drop_table("plan_refunds")
