"""What was exchanged with operators, as the staff read it (`cauri exchanges list`, `cauri
payments show`, the console): each operator operation with its exchanges. Reads only, and
nothing of the connectors themselves (no HTTP client, no connector kind), so that a command
that shows a payment does not load them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, String, cast, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.models.operations import OperatorExchange, OperatorOperation
from cauri.models.plans import PlanRefund


@dataclass(frozen=True)
class OperationView:
    operation: OperatorOperation
    exchanges: Sequence[OperatorExchange]


async def exchanges(session: AsyncSession, reference: str) -> list[OperationView]:
    """The operator operations of a payment, payout, refund or plan, oldest first, each
    with its exchanges in order."""
    reference = reference.strip()
    # A plan's operations are those of its cancellation refunds.
    of_plan = select(PlanRefund.reference).where(cast(PlanRefund.plan_id, String) == reference)
    return await _with_exchanges(
        session,
        select(OperatorOperation)
        .where(
            or_(
                OperatorOperation.subject_ref == reference,
                OperatorOperation.subject_ref.in_(of_plan),
            )
        )
        .order_by(OperatorOperation.created_at, OperatorOperation.action),
    )


async def under_review(session: AsyncSession) -> list[OperationView]:
    """Operations still pending whose status queries ran out: a person must find out from
    the operator what became of them. Oldest first."""
    return await _with_exchanges(
        session,
        select(OperatorOperation)
        .where(
            OperatorOperation.review_required_at.is_not(None),
            OperatorOperation.status == "pending",
        )
        .order_by(OperatorOperation.review_required_at),
    )


async def _with_exchanges(session: AsyncSession, statement: Select[Any]) -> list[OperationView]:
    operations = (await session.scalars(statement)).all()
    if not operations:
        return []
    found: dict[object, list[OperatorExchange]] = {}
    rows = await session.scalars(
        select(OperatorExchange)
        .where(OperatorExchange.operation_id.in_([op.id for op in operations]))
        .order_by(OperatorExchange.id)
    )
    for exchange in rows:
        found.setdefault(exchange.operation_id, []).append(exchange)
    return [OperationView(op, found.get(op.id, [])) for op in operations]
