"""The correcting entry a discrepancy most often calls for, as `--book` takes it: what
`cauri reconcile show` and the console offer finance to start from, never booked by itself.

Amounts are signed as the wallet sees them (money in: positive). What the operator moved
beyond what Cauri booked goes to whoever Cauri booked the operation for: the merchant of a
payment, payout or refund (a plan's escrow is the staff's to resolve: no suggestion); an
operation whose outcome differs is corrected by what its domain books on success, the
merchant's part and the platform's fee, or its exact reverse.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text
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


@dataclass(frozen=True)
class _Success:
    """What a succeeded operation's domain books besides the wallet: the merchant's part
    and the platform's fee (their sum is what moved in the wallet, money in positive)."""

    merchant_id: str
    merchant: int
    fees: int

    def parts(self, sign: int, currency: str) -> list[str]:
        shown = [f"merchant:{self.merchant_id}={decimal_text(sign * self.merchant, currency)}"]
        if self.fees:
            shown.append(f"fees={decimal_text(sign * self.fees, currency)}")
        return shown


async def _success(session: AsyncSession, operation: OperatorOperation) -> _Success | None:
    """None for what is not a merchant's own (a plan's instalment or refund: its escrow)."""
    reference = operation.subject_ref
    if operation.subject == "payment":
        payment = await session.get(Payment, uuid.UUID(reference))
        if payment is None or payment.plan_id is not None:
            return None
        return _Success(payment.merchant_id, payment.net_amount, payment.fee_amount)
    if operation.subject == "payout":
        payout = await session.get(Payout, reference)
        if payout is None:
            return None
        return _Success(payout.merchant_id, -(payout.amount + payout.fee_amount), payout.fee_amount)
    if operation.subject == "refund":
        refund = await session.get(Refund, reference)
        if refund is None or refund.plan_id is not None:
            return None
        return _Success(refund.merchant_id, -refund.amount, 0)
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
    success = await _success(session, operation)
    if success is None:
        return []
    currency = discrepancy.currency or ""
    if discrepancy.kind == DiscrepancyKind.AMOUNT_DIFFERS and line is not None:
        # Fees are Cauri's own: only what the operator moved beyond the request.
        difference = line.amount - _booked(operation)
        return [f"merchant:{success.merchant_id}={decimal_text(difference, currency)}"]
    if discrepancy.kind == DiscrepancyKind.STATUS_DIFFERS and operation.status != "pending":
        said = discrepancy.details.get("operator")
        if said == "succeeded" and operation.status == "failed":
            return success.parts(1, currency)  # what its success would have booked
        if said == "failed" and operation.status == "succeeded":
            return success.parts(-1, currency)  # the exact reverse of what it booked
    return []
