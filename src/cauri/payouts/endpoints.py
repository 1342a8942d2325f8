from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.kit.errors import NotFound
from cauri.kit.pagination import PageDep, listing
from cauri.merchants.auth import CallerDep
from cauri.operators.protocol import Outcome
from cauri.payouts.schemas import PayoutCreate, Period, payout_object
from cauri.payouts.service import payouts

router = APIRouter(route_class=UnitOfWorkRoute, tags=["payouts"])
test_helpers = APIRouter(route_class=UnitOfWorkRoute, tags=["test helpers"])

Status = Literal["pending", "succeeded", "failed"]


@router.post("/payouts", status_code=201)
async def create_payout(
    body: PayoutCreate, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    payout, created = await payouts.create(session, runtime, caller, body)
    return JSONResponse(ok(payout_object(payout)), status_code=201 if created else 200)


@router.get("/payouts")
async def list_payouts(
    caller: CallerDep,
    session: SessionDep,
    page: PageDep,
    status: Annotated[Status | None, Query()] = None,
    start: Annotated[str | None, Query(alias="from")] = None,
    end: Annotated[str | None, Query(alias="to")] = None,
) -> dict[str, Any]:
    rows, total = await payouts.list(session, caller, page, status, Period.parse(start, end))
    return listing([payout_object(p) for p in rows], page, total)


@router.get("/payouts/{reference}")
async def get_payout(reference: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    return ok(payout_object(await payouts.get(session, caller, reference)))


@test_helpers.post("/test-helpers/payouts/{reference}/{outcome}")
async def decide_payout(
    reference: str,
    outcome: Literal["succeed", "fail"],
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
) -> dict[str, Any]:
    if caller.livemode:
        raise NotFound("Les aides de test n'existent qu'avec une clé de test.")
    decided = Outcome.SUCCEEDED if outcome == "succeed" else Outcome.FAILED
    payout = await payouts.force_outcome(session, runtime, caller, reference, decided)
    return ok(payout_object(payout))
