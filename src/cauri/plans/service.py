"""Installment plans: creation, instalments and their rules, cancellation and expiry.

The money side (escrow, completion, refunds) is in cauri.plans.settlement.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import Conflict, InvalidRequest, PlanExpired
from cauri.kit.ids import parse_uuid
from cauri.kit.money import (
    FIXED_FEE_CURRENCIES,
    Currency,
    fixed_fee_currency,
    format_major,
    percent_of,
    to_minor,
)
from cauri.kit.pagination import Page
from cauri.merchants.caller import Caller
from cauri.models import InstallmentPlan, Payment, PlatformSettings, lookups
from cauri.models.plans import PlanStatus
from cauri.operators.protocol import Outcome
from cauri.payments.schemas import PaymentFields
from cauri.payments.service import Instalment, Origin, payments
from cauri.plans import jobs, settlement
from cauri.plans.schemas import PlanCreate
from cauri.platform.service import fixed_column
from cauri.runtime import Runtime

_STATUS_FR = {
    PlanStatus.SUCCEEDED: "soldé",
    PlanStatus.REFUNDED: "remboursé",
    PlanStatus.FAILED: "en échec",
}


def _creation_fee(settings: PlatformSettings | None, target: int, currency: str) -> int:
    """Fixed amounts (XOF, which XAF shares at par; EUR and USD only where set) or a
    percentage of the target, rounded half up to the currency's unit (spec:
    creation_fee_amount; DESIGN: fixed fees)."""
    if settings is None:
        return 0
    fixed = {
        in_currency: getattr(settings, fixed_column("plan_creation_fee_fixed", in_currency))
        for in_currency in FIXED_FEE_CURRENCIES
    }
    if any(amount is not None for amount in fixed.values()):
        return int(fixed[fixed_fee_currency(currency)] or 0)
    if settings.plan_creation_fee_percent is not None:
        return percent_of(target, settings.plan_creation_fee_percent)
    return 0


def _refusal(plan: InstallmentPlan) -> Conflict:
    """Why a plan that is not actively pending refuses an instalment or a cancellation."""
    if plan.status != PlanStatus.PENDING:
        return Conflict(
            f"Le plan est {_STATUS_FR[PlanStatus(plan.status)]} : l'opération est refusée."
        )
    return Conflict(
        "Une annulation ou l'expiration de ce plan est en cours : l'opération est refusée."
    )


_BY_REFERENCE = lookups.ByReference(
    InstallmentPlan, InstallmentPlan.id, "Plan de paiement introuvable.", parse_uuid
)


class PlanService:
    async def create(
        self, session: AsyncSession, runtime: Runtime, caller: Caller, body: PlanCreate
    ) -> tuple[InstallmentPlan, bool]:
        """Returns the plan and whether it was created (False: an idempotent replay).

        The creation fee and the penalty are copied from the platform settings now, so a
        later change of the settings never alters this plan."""
        currency = body.currency.value
        target = to_minor(body.target_amount, currency, "target_amount")
        settings = await session.get(PlatformSettings, 1)
        now = runtime.clock.now()
        expires_at = now + timedelta(days=runtime.settings.plan_lifetime_days)
        values: dict[str, Any] = {
            "id": uuid.uuid4(),
            "merchant_id": caller.merchant_id,
            "livemode": caller.livemode,
            "external_id": body.external_id,
            "status": PlanStatus.PENDING.value,
            "description": body.description,
            "currency": currency,
            "target_amount": target,
            "creation_fee_amount": _creation_fee(settings, target, currency),
            "cancellation_penalty_percent": (
                settings.plan_penalty_percent if settings else Decimal(0)
            ),
            "paid_amount": 0,
            "expires_at": expires_at,
            "created_at": now,
            "updated_at": now,
        }
        created = await lookups.inserted_unless_replayed(session, InstallmentPlan, values)
        if created is None:
            return await self.get(session, caller, body.external_id or ""), False
        # The expiry is one job due at expires_at: no periodic scan of every plan.
        await jobs.EXPIRE.enqueue(
            session,
            jobs.PlanJob(str(created.id)),
            livemode=created.livemode,
            now=now,
            delay=(expires_at - now).total_seconds(),
        )
        return created, True

    async def get(
        self, session: AsyncSession, caller: Caller, reference: str, *, lock: bool = False
    ) -> InstallmentPlan:
        """By reference or by the merchant's external_id, within the caller's environment."""
        return await _BY_REFERENCE.get(session, caller, reference, lock=lock)

    async def instalments(self, session: AsyncSession, plan: InstallmentPlan) -> Sequence[Payment]:
        return await payments.oldest_first(session, Payment.plan_id == plan.id)

    async def list(
        self, session: AsyncSession, caller: Caller, page: Page, status: PlanStatus | None
    ) -> tuple[Sequence[InstallmentPlan], int]:
        kept = [] if status is None else [InstallmentPlan.status == status]
        return await lookups.newest_of_yours(
            session, caller, InstallmentPlan, InstallmentPlan.id, page, *kept
        )

    async def add_instalment(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        reference: str,
        body: PaymentFields,
        base_url: str | None,
        origin: Origin | None = None,
    ) -> Payment:
        """Records one instalment and engages the operator. Every rule is checked first,
        with the plan locked, so simultaneous instalments never reserve more than the
        remaining balance; a rejected instalment writes nothing and debits no one (a plan
        found past its expires_at expires, though). `origin`: the checkout session it is
        paid from (its return page is Cauri's own)."""
        plan = await self._lock_actively_pending(session, runtime, caller, reference)
        if body.currency is not None and body.currency != plan.currency:
            raise InvalidRequest.field(
                "currency", f"Ce plan est en {plan.currency} : ses versements aussi."
            )
        body = body.model_copy(update={"currency": Currency(plan.currency)})
        priced = await payments.price(
            session, runtime, caller, body, instalment=True, own_return_page=origin is not None
        )
        reserved, fee_part = await self._pending(session, plan)
        amount = priced.checked.amount
        if amount < fee_part:
            raise InvalidRequest.field(
                "amount",
                "Le premier versement doit couvrir au moins les frais de création du plan "
                f"({format_major(fee_part, plan.currency)}).",
            )
        available = plan.target_amount - plan.paid_amount - reserved
        if amount - fee_part > available:
            raise InvalidRequest.field(
                "amount",
                f"Ce versement compterait {format_major(amount - fee_part, plan.currency)} "
                "alors que le reste à payer du plan, versements en attente déduits, est de "
                f"{format_major(max(available, 0), plan.currency)}.",
            )
        payment = await payments.record(
            session,
            runtime,
            caller,
            body,
            priced,
            base_url,
            description=f"Versement du plan {plan.id}",
            instalment=Instalment(plan.id, fee_part),
            origin=origin,
        )
        assert payment is not None  # without an external_id, nothing can conflict
        await payments.initiate(session, runtime, payment, otp=body.otp)
        return payment

    async def instalment_bounds(
        self, session: AsyncSession, plan: InstallmentPlan
    ) -> tuple[int, int]:
        """The least and the most the next instalment may be now (add_instalment's rules):
        at least the creation fee it must carry, at most that and what remains to pay,
        pending instalments deducted."""
        reserved, fee_part = await self._pending(session, plan)
        available = max(plan.target_amount - plan.paid_amount - reserved, 0)
        return max(fee_part, 1), fee_part + available

    async def _pending(self, session: AsyncSession, plan: InstallmentPlan) -> tuple[int, int]:
        """What the plan's pending instalments reserve (the part each will count if it
        succeeds: DESIGN, they reserve it), and the creation fee part the next instalment
        must carry: the fee, while it is neither paid nor carried by a pending instalment (so
        if the instalment carrying it fails, the next one carries it)."""
        reserved, fee_carried = (
            await session.execute(
                select(
                    func.coalesce(func.sum(Payment.amount - Payment.plan_fee_amount), 0),
                    func.coalesce(func.bool_or(Payment.plan_fee_amount > 0), False),
                ).where(Payment.plan_id == plan.id, Payment.status == Outcome.PENDING)
            )
        ).one()
        fee_due = not (plan.creation_fee_paid or fee_carried)
        return int(reserved), plan.creation_fee_amount if fee_due else 0

    async def cancel(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        reference: str,
        reason: str | None,
    ) -> InstallmentPlan:
        plan = await self._lock_actively_pending(session, runtime, caller, reference)
        await settlement.begin_cancellation(session, runtime, plan, reason, runtime.clock.now())
        return plan

    async def _lock_actively_pending(
        self, session: AsyncSession, runtime: Runtime, caller: Caller, reference: str
    ) -> InstallmentPlan:
        """The plan, locked, if it takes instalments and cancellation. Past its expires_at it
        expires here and now, kept though the answer is 409: the expiry job may lag."""
        plan = await self.get(session, caller, reference, lock=True)
        if await settlement.expire_if_due(session, runtime, plan):
            raise PlanExpired(
                f"Ce plan a expiré le {plan.expires_at:%d/%m/%Y à %H:%M:%S} UTC : il "
                "n'accepte plus ni versement ni annulation, et son remboursement commence."
            )
        if not settlement.actively_pending(plan):
            raise _refusal(plan)
        return plan

    async def expire(self, session: AsyncSession, runtime: Runtime, plan_id: uuid.UUID) -> None:
        """The expiry job, due at expires_at: a plan still actively pending expires."""
        plan = await settlement.lock(session, plan_id)
        if plan is not None:
            await settlement.expire_if_due(session, runtime, plan)

    async def expire_now(
        self, session: AsyncSession, runtime: Runtime, caller: Caller, reference: str
    ) -> InstallmentPlan:
        """Test helper: the expiry, run now; the plan then expires at this instant (at its
        expires_at, if that has passed)."""
        plan = await self.get(session, caller, reference, lock=True)
        if not settlement.actively_pending(plan):
            raise _refusal(plan)
        plan.expires_at = min(plan.expires_at, runtime.clock.now())
        await settlement.begin_expiry(session, runtime, plan)
        return plan


plans = PlanService()
