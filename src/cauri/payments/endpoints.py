from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.kit import public_url
from cauri.kit.errors import NotFound
from cauri.kit.pagination import PageDep, listing
from cauri.merchants.auth import CallerDep
from cauri.operators.protocol import Outcome
from cauri.payments.schemas import PaymentCreate, payment_object
from cauri.payments.service import payments

router = APIRouter(route_class=UnitOfWorkRoute, tags=["payments"])
test_helpers = APIRouter(route_class=UnitOfWorkRoute, tags=["test helpers"])

Status = Literal["pending", "succeeded", "refunded", "failed"]


def public_base_url(request: Request, runtime: RuntimeDep) -> str | None:
    return public_url.public_base_url(runtime.settings, request.scope.get("server"))


@router.post("/payments", status_code=201)
async def create_payment(
    body: PaymentCreate,
    request: Request,
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
) -> JSONResponse:
    payment, created = await payments.create(
        session, runtime, caller, body, public_base_url(request, runtime)
    )
    return JSONResponse(ok(payment_object(payment)), status_code=201 if created else 200)


@router.get("/payments")
async def list_payments(
    caller: CallerDep,
    session: SessionDep,
    page: PageDep,
    status: Annotated[Status | None, Query()] = None,
) -> dict[str, Any]:
    rows, total = await payments.list(session, caller, page, status)
    return listing([payment_object(p) for p in rows], page, total)


@router.get("/payments/{reference}")
async def get_payment(reference: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    return ok(payment_object(await payments.get(session, caller, reference)))


async def _decide(
    reference: str, outcome: Outcome, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    if caller.livemode:
        raise NotFound("Les aides de test n'existent qu'avec une clé de test.")
    payment = await payments.get(session, caller, reference)
    settled = await payments.force_outcome(session, runtime, payment.id, outcome, "test_helper")
    return ok(payment_object(settled))


# Two routes rather than one with an `{outcome}` parameter: any other verb is an unknown
# route (404), not a malformed request.
@test_helpers.post("/test-helpers/payments/{reference}/succeed")
async def succeed_payment(
    reference: str, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    return await _decide(reference, Outcome.SUCCEEDED, caller, session, runtime)


@test_helpers.post("/test-helpers/payments/{reference}/fail")
async def fail_payment(
    reference: str, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    return await _decide(reference, Outcome.FAILED, caller, session, runtime)
