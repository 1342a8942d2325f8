"""HTTP routes of installment plans (spec: Endpoints, Installment plans)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from fastapi.responses import JSONResponse

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.kit.errors import NotFound
from cauri.kit.pagination import PageDep, listing
from cauri.merchants.auth import CallerDep
from cauri.payments.endpoints import public_base_url
from cauri.payments.schemas import PaymentFields, payment_object
from cauri.plans.schemas import PlanCancel, PlanCreate, plan_object
from cauri.plans.service import plans

router = APIRouter(route_class=UnitOfWorkRoute, tags=["installment plans"])
test_helpers = APIRouter(route_class=UnitOfWorkRoute, tags=["test helpers"])


@router.post("/installment-plans", status_code=201)
async def create_plan(
    body: PlanCreate, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    plan, created = await plans.create(session, runtime, caller, body)
    return JSONResponse(ok(plan_object(plan)), status_code=201 if created else 200)


@router.get("/installment-plans")
async def list_plans(caller: CallerDep, session: SessionDep, page: PageDep) -> dict[str, Any]:
    rows, total = await plans.list(session, caller, page)
    return listing([plan_object(plan) for plan in rows], page, total)


@router.get("/installment-plans/{reference}")
async def get_plan(reference: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    plan = await plans.get(session, caller, reference)
    return ok(plan_object(plan, await plans.instalments(session, plan)))


@router.post("/installment-plans/{reference}/payments", status_code=201)
async def add_instalment(
    reference: str,
    body: PaymentFields,
    request: Request,
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
) -> dict[str, Any]:
    payment = await plans.add_instalment(
        session, runtime, caller, reference, body, public_base_url(request, runtime)
    )
    return ok(payment_object(payment))


@router.post("/installment-plans/{reference}/cancel")
async def cancel_plan(
    reference: str,
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
    body: Annotated[PlanCancel | None, Body()] = None,
) -> dict[str, Any]:
    reason = body.reason if body else None
    return ok(plan_object(await plans.cancel(session, runtime, caller, reference, reason)))


@test_helpers.post("/test-helpers/installment-plans/{reference}/expire")
async def expire_plan(
    reference: str, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    if caller.livemode:
        raise NotFound("Les aides de test n'existent qu'avec une clé de test.")
    return ok(plan_object(await plans.expire_now(session, runtime, caller, reference)))
