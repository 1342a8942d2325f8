"""The staff's way out for a plan whose cancellation refund failed (`cauri plans resolve`):
what is left in its escrow goes to a Mobile Money number they give, or to the merchant.
Nothing stays in escrow with no way out.

A failed plan's escrow holds its refund (put back by the failure's reversal, or never sent:
a card instalment) and the money of late instalments no operator paid back. The resolution
moves all of it, with the plan locked as every movement of its escrow is.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit import phone
from cauri.kit.errors import Conflict, InvalidRequest, NotFound
from cauri.kit.ids import parse_uuid
from cauri.ledger import movements
from cauri.ledger.service import balance
from cauri.models import InstallmentPlan, PlanRefund
from cauri.models.plans import PlanResolution, PlanStatus
from cauri.operators import catalogue
from cauri.operators.protocol import Outcome
from cauri.plans import settlement
from cauri.runtime import Runtime


async def resolvable(session: AsyncSession, reference: str) -> tuple[InstallmentPlan, int]:
    """The locked failed plan and what its escrow holds (what a resolution moves)."""
    plan_id = parse_uuid(reference)
    plan = None if plan_id is None else await settlement.lock(session, plan_id)
    if plan is None:
        raise NotFound("Plan introuvable.")
    if plan.status != PlanStatus.FAILED:
        raise Conflict("Seul un plan en échec se résout : son remboursement n'a pas échoué.")
    under_way = await session.scalar(
        select(PlanRefund.reference).where(
            PlanRefund.plan_id == plan.id, PlanRefund.status == Outcome.PENDING
        )
    )
    if under_way is not None:
        raise Conflict(f"Un remboursement de ce plan est déjà en cours ({under_way}).")
    held = await balance(session, settlement.escrow(plan).account)
    if held == 0:
        raise Conflict("Le séquestre de ce plan est vide : il n'y a rien à résoudre.")
    return plan, held


async def refund_to(
    session: AsyncSession,
    runtime: Runtime,
    reference: str,
    *,
    phone_number: str,
    operator: str,
    reason: str | None = None,
) -> tuple[InstallmentPlan, PlanRefund]:
    """Sends what the escrow holds to `phone_number` by `operator`. The plan becomes
    `refunded` (resolution `refunded`) when the refund succeeds; should it fail, the plan
    stays failed, the money back in escrow, and the staff may resolve it again."""
    plan, refund = await record_refund_to(
        session, runtime, reference, phone_number=phone_number, operator=operator, reason=reason
    )
    await settlement.send_refund(session, runtime, plan, refund)
    return plan, refund


def mobile_money(phone_number: str, operator: str) -> tuple[catalogue.PaymentMode, str]:
    """The Mobile Money mode and normalized number asked for, whatever the plan."""
    mode = catalogue.find(operator)
    if mode is None or mode.is_card:
        raise InvalidRequest.field("operator", f"Opérateur Mobile Money inconnu : {operator}.")
    return mode, phone.normalize(phone_number, mode.country_code)


def destination(plan: InstallmentPlan, phone_number: str, operator: str) -> tuple[str, str]:
    """The operator and the normalized number a refund of the plan may go to."""
    mode, number = mobile_money(phone_number, operator)
    if plan.currency != mode.currency:
        raise InvalidRequest.field(
            "operator", f"Ce plan est en {plan.currency} ; {mode.operator} paie en {mode.currency}."
        )
    return mode.operator, number


async def record_refund_to(
    session: AsyncSession,
    runtime: Runtime,
    reference: str,
    *,
    phone_number: str,
    operator: str,
    reason: str | None = None,
) -> tuple[InstallmentPlan, PlanRefund]:
    """refund_to's first half: the refund recorded, not yet sent. Sending it through an
    operator's network commits the caller's transaction (calls.engage): what must be kept
    with it (the staff's audit entry) is written between the two halves."""
    mobile_money(phone_number, operator)  # refused before the plan is read
    plan, held = await resolvable(session, reference)
    plan.refund_operator, plan.refund_phone_number = destination(plan, phone_number, operator)
    plan.resolution_reason = reason.strip() if reason and reason.strip() else None
    refund = await settlement.record_refund(session, runtime, plan, held)
    return plan, refund


async def release_to_merchant(
    session: AsyncSession, runtime: Runtime, reference: str, *, reason: str
) -> InstallmentPlan:
    """Credits the merchant's balance with what the escrow holds (say, the merchant repaid
    the customer by other means). The plan stays failed: its own refund did fail."""
    if not reason.strip():
        raise InvalidRequest.field("reason", "Dites pourquoi l'argent va au marchand.")
    plan, held = await resolvable(session, reference)
    now = runtime.clock.now()
    await movements.escrow_released(
        session,
        escrow=settlement.escrow(plan),
        amount=held,
        reference=str(plan.id),
        at=now,
    )
    plan.resolution_reason = reason.strip()
    plan.updated_at = now
    settlement.resolved(plan, PlanResolution.RELEASED_TO_MERCHANT, now)
    await session.flush()
    return plan
