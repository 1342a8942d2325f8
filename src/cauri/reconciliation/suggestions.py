"""The correcting entry a discrepancy most often calls for, as `--book` takes it: what
`cauri reconcile show` and the console offer finance to start from, never booked by itself.

Amounts are signed as the wallet sees them (money in: positive). What the operator moved
beyond what Cauri booked goes to whoever Cauri booked the operation for: the merchant of a
payment, payout or refund (a plan's escrow is the staff's to resolve: no suggestion).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.money import decimal_text
from cauri.models import OperatorOperation, Payment, Payout, Refund
from cauri.models.statements import Discrepancy, StatementLine
from cauri.reconciliation.kinds import DiscrepancyKind

WALLET_ONLY = (
    DiscrepancyKind.FEE_TAKEN,
    DiscrepancyKind.MISSING_AT_CAURI,
    DiscrepancyKind.DUPLICATE_AT_OPERATOR,
)


def _booked(operation: OperatorOperation) -> int:
    """What Cauri booked the operation as moving in the wallet."""
    amount = int(operation.request["amount"])
    return amount if operation.action == "collect" else -amount


async def _merchant(session: AsyncSession, operation: OperatorOperation) -> str | None:
    reference = operation.subject_ref
    if operation.subject == "payment":
        return await session.scalar(
            select(Payment.merchant_id).where(
                Payment.id == uuid.UUID(reference), Payment.plan_id.is_(None)
            )
        )
    if operation.subject == "payout":
        return await session.scalar(select(Payout.merchant_id).where(Payout.reference == reference))
    if operation.subject == "refund":
        return await session.scalar(
            select(Refund.merchant_id).where(
                Refund.reference == reference, Refund.plan_id.is_(None)
            )
        )
    return None


# What the corrections of each discrepancy booked so far, as parts (the wallet's rest
# negated): a discrepancy reopened by a late line calls for the difference only.
_BOOKED = text(
    """
    SELECT substr(t.reference, 13)::bigint, -sum(p.amount)
    FROM ledger_transactions t JOIN ledger_postings p ON p.transaction_id = t.id
    WHERE t.kind = 'adjustment' AND t.reference = ANY(:references)
      AND p.account LIKE 'connector:%:wallet:%'
    GROUP BY t.reference
    """
)


async def booked(session: AsyncSession, found: Sequence[Discrepancy]) -> dict[int, int]:
    """Per discrepancy, what its corrections have booked so far (minor units)."""
    references = [f"discrepancy:{discrepancy.id}" for discrepancy in found]
    if not references:
        return {}
    rows = await session.execute(_BOOKED, {"references": references})
    return {int(identifier): int(amount) for identifier, amount in rows}


def wallet_only(discrepancy: Discrepancy, already: int = 0) -> str | None:
    """To suspense or the platform's costs, from what the discrepancy says alone: what no
    operation of Cauri's accounts for, less what its corrections booked already (the
    console's queue offers it on each row)."""
    kind, details, currency = discrepancy.kind, discrepancy.details, discrepancy.currency or ""
    if kind == DiscrepancyKind.FEE_TAKEN:
        target, amount = "operator_costs", -int(details["amount"])
    elif kind in (DiscrepancyKind.MISSING_AT_CAURI, DiscrepancyKind.DUPLICATE_AT_OPERATOR):
        target, amount = "suspense", int(details["amount"])
    else:
        return None
    left = amount - already
    return f"{target}={decimal_text(left, currency)}" if left else None


def _to_merchant(
    discrepancy: Discrepancy, line: StatementLine | None, operation: OperatorOperation
) -> int | None:
    """What the merchant is owed (positive) or owes, for an operation that ended
    otherwise at the operator than in Cauri's books."""
    kind = discrepancy.kind
    if kind == DiscrepancyKind.AMOUNT_DIFFERS and line is not None:
        return line.amount - _booked(operation)
    if kind == DiscrepancyKind.STATUS_DIFFERS and operation.status != "pending":
        said = discrepancy.details.get("operator")
        if said == "succeeded" and operation.status == "failed" and line is not None:
            return line.amount
        if said == "failed" and operation.status == "succeeded":
            return -_booked(operation)
    return None


async def suggested(
    session: AsyncSession,
    discrepancy: Discrepancy,
    line: StatementLine | None,
    operation: OperatorOperation | None,
) -> list[str]:
    if discrepancy.kind in WALLET_ONLY:
        already = (await booked(session, [discrepancy])).get(discrepancy.id, 0)
        alone = wallet_only(discrepancy, already)
        return [] if alone is None else [alone]
    if operation is None:
        return []
    owed = _to_merchant(discrepancy, line, operation)
    merchant = await _merchant(session, operation) if owed else None
    if owed is None or merchant is None:
        return []
    return [f"merchant:{merchant}={decimal_text(owed, discrepancy.currency or '')}"]
