from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query
from fastapi.responses import JSONResponse

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, created_or_replayed, ok
from cauri.kit.errors import Conflict, InsufficientFunds, RefundFailed
from cauri.kit.openapi import ListEnvelope, answers
from cauri.kit.period_query import PeriodDep
from cauri.merchants.auth import CallerDep
from cauri.merchants.listing import ListRequestDep
from cauri.refunds.schemas import RefundCreate, RefundObject, refund_object
from cauri.refunds.service import RefundFilters, refunds

router = APIRouter(route_class=UnitOfWorkRoute, tags=["refunds"])

Status = Literal["pending", "succeeded", "failed"]


@router.post(
    "/payments/{reference}/refund",
    status_code=201,
    responses=answers(
        RefundObject, Conflict, InsufficientFunds, RefundFailed, status=201, replayed=True
    ),
)
async def refund_payment(
    reference: str,
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
    body: Annotated[RefundCreate | None, Body()] = None,
) -> JSONResponse:
    """Refunds a succeeded Mobile Money payment, in whole or in part (`amount`), from
    the balance; several refunds until nothing remains. An operator that refunds only whole
    (Wave) gives back all the customer paid, once: a partial refund through it is 422. A
    refund retried under its `external_id` returns the refund made then (200)."""
    request = body if body is not None else RefundCreate()
    refund, created = await refunds.create(session, runtime, caller, reference, request)
    return created_or_replayed(refund_object(refund), created)


@router.get("/refunds", responses=answers(ListEnvelope[RefundObject]))
async def list_refunds(
    asked: ListRequestDep,
    period: PeriodDep,
    payment: Annotated[
        str | None, Query(description="Référence (ou external_id) du paiement remboursé.")
    ] = None,
    status: Annotated[Status | None, Query()] = None,
) -> dict[str, Any]:
    filters = RefundFilters(payment=payment, status=status, period=period)
    found = await refunds.list(asked.session, asked.caller, asked.page, filters)
    return asked.answer(found, refund_object)


@router.get("/refunds/{reference}", responses=answers(RefundObject))
async def get_refund(reference: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    """One refund, by its reference."""
    return ok(refund_object(await refunds.get(session, caller, reference)))
