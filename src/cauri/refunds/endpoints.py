from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.merchants.auth import CallerDep
from cauri.refunds.schemas import RefundCreate, refund_object
from cauri.refunds.service import refunds

router = APIRouter(route_class=UnitOfWorkRoute, tags=["refunds"])


@router.post("/payments/{reference}/refund", status_code=201)
async def refund_payment(
    reference: str,
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
    body: Annotated[RefundCreate | None, Body()] = None,
) -> dict[str, Any]:
    reason = body.reason if body is not None else None
    return ok(refund_object(await refunds.create(session, runtime, caller, reference, reason)))


@router.get("/refunds/{reference}")
async def get_refund(reference: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    return ok(refund_object(await refunds.get(session, caller, reference)))
