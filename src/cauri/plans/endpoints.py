"""HTTP routes of installment plans (spec: Endpoints, Installment plans)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import JSONResponse

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, created_or_replayed, ok
from cauri.kit.errors import Conflict, NotFound, PaymentFailed
from cauri.kit.openapi import ListEnvelope, answers
from cauri.merchants.auth import CallerDep, PaymentCallerDep
from cauri.merchants.listing import ListRequestDep
from cauri.models.plans import PlanStatus
from cauri.payments.endpoints import public_base_url
from cauri.payments.schemas import PaymentFields, PaymentObject, payment_object
from cauri.plans.schemas import PlanCancel, PlanCreate, PlanObject, plan_object
from cauri.plans.service import plans

router = APIRouter(route_class=UnitOfWorkRoute, tags=["installment plans"])
test_helpers = APIRouter(route_class=UnitOfWorkRoute, tags=["test helpers"])


@router.post(
    "/installment-plans",
    status_code=201,
    responses=answers(PlanObject, status=201, replayed=True),
)
async def create_plan(
    body: PlanCreate, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Creates an installment plan (201, `pending`); an `external_id` already used
    returns the plan created then (200)."""
    plan, created = await plans.create(session, runtime, caller, body)
    return created_or_replayed(plan_object(plan), created)


@router.get("/installment-plans", responses=answers(ListEnvelope[PlanObject]))
async def list_plans(
    asked: ListRequestDep,
    status: Annotated[PlanStatus | None, Query()] = None,
) -> dict[str, Any]:
    """The account's plans in the key's environment, newest first."""
    found = await plans.list(asked.session, asked.caller, asked.page, status)
    return asked.answer(found, plan_object)


@router.get("/installment-plans/{reference}", responses=answers(PlanObject))
async def get_plan(reference: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    """One plan with its instalments (`payments`), by reference or `external_id`."""
    plan = await plans.get(session, caller, reference)
    return ok(plan_object(plan, await plans.instalments(session, plan)))


@router.post(
    "/installment-plans/{reference}/payments",
    status_code=201,
    responses=answers(PaymentObject, PaymentFailed, Conflict, status=201),
)
async def add_instalment(
    reference: str,
    body: PaymentFields,
    request: Request,
    caller: PaymentCallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
) -> dict[str, Any]:
    """Pays one instalment, like a payment: held in the plan's escrow until the plan is
    fully paid. The first must cover the creation fee; none may exceed what remains (422)."""
    payment = await plans.add_instalment(
        session, runtime, caller, reference, body, public_base_url(request, runtime)
    )
    return ok(payment_object(payment))


@router.post("/installment-plans/{reference}/cancel", responses=answers(PlanObject, Conflict))
async def cancel_plan(
    reference: str,
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
    body: Annotated[PlanCancel | None, Body()] = None,
) -> dict[str, Any]:
    """Cancels a plan not fully paid: the customer is refunded what they paid less the
    penalty; the plan stays `pending` until that refund is paid, then `refunded`."""
    reason = body.reason if body else None
    return ok(plan_object(await plans.cancel(session, runtime, caller, reference, reason)))


@test_helpers.post(
    "/test-helpers/installment-plans/{reference}/expire",
    responses=answers(PlanObject, Conflict),
)
async def expire_plan(
    reference: str, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    """Test keys: expires the plan now, as its `expires_at` would."""
    if caller.livemode:
        raise NotFound("Les aides de test n'existent qu'avec une clé de test.")
    return ok(plan_object(await plans.expire_now(session, runtime, caller, reference)))
