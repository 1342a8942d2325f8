"""What a merchant's team does from the dashboard, through the same services as the API (no
rule written twice), each audited with the member as its actor."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.audit.log import audited
from cauri.kit.errors import InvalidRequest
from cauri.merchants.auth import Caller
from cauri.models import Refund
from cauri.payments.service import payments
from cauri.refunds.schemas import RefundCreate
from cauri.refunds.service import refunds
from cauri.runtime import Runtime

REFUND_PAYMENT = "payment.refund"
_REASON_MAX = 255
# What RefundCreate's amount admits (15 digits).
_AMOUNT_LIMIT = Decimal(10) ** 15


async def refund(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    caller: Caller,
    payment_reference: str,
    *,
    amount: Decimal | None,
    reason: str | None,
) -> Refund:
    """As `POST /payments/{reference}/refund`: `amount` in major units, as the API's; None
    refunds all that remains."""
    if amount is not None and not 0 < amount < _AMOUNT_LIMIT:
        raise InvalidRequest.field("amount", "Le montant doit être positif.")
    if reason is not None and len(reason) > _REASON_MAX:
        raise InvalidRequest.field("reason", f"Le motif tient en {_REASON_MAX} caractères.")
    payment = await payments.get(session, caller, payment_reference)

    async def state() -> dict[str, object]:
        await session.refresh(payment)
        return {"status": payment.status, "amount_refunded": payment.amount_refunded}

    async def change() -> Refund:
        body = RefundCreate(amount=amount, reason=reason)
        made, _ = await refunds.create(session, runtime, caller, str(payment.id), body)
        return made

    resource = ("payment", str(payment.id))
    now = runtime.clock.now()
    return await audited(session, actor, REFUND_PAYMENT, resource, state, change, reason, at=now)
