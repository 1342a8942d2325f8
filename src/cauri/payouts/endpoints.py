from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, created_or_replayed, ok
from cauri.kit.errors import (
    Conflict,
    InsufficientFunds,
    NotFound,
    PayoutFailed,
    PayoutLimitExceeded,
)
from cauri.kit.openapi import ListEnvelope, answers
from cauri.kit.period_query import PeriodDep
from cauri.merchants.auth import CallerDep, PayoutCallerDep
from cauri.merchants.listing import ListRequestDep
from cauri.operators.protocol import Outcome
from cauri.payouts.schemas import PayoutCreate, PayoutObject, payout_object
from cauri.payouts.service import payouts

router = APIRouter(route_class=UnitOfWorkRoute, tags=["payouts"])
test_helpers = APIRouter(route_class=UnitOfWorkRoute, tags=["test helpers"])

Status = Literal["pending", "succeeded", "failed"]


@router.post(
    "/payouts",
    status_code=201,
    responses=answers(
        PayoutObject,
        InsufficientFunds,
        PayoutFailed,
        PayoutLimitExceeded,
        status=201,
        replayed=True,
    ),
)
async def create_payout(
    body: PayoutCreate, caller: PayoutCallerDep, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Sends money from the balance to a Mobile Money number (201, `pending`), fees on
    top; without `phone_number`, to the account's own validated payout account. An
    `external_id` already used returns the payout created then (200)."""
    payout, created = await payouts.create(session, runtime, caller, body)
    return created_or_replayed(payout_object(payout), created)


@router.get("/payouts", responses=answers(ListEnvelope[PayoutObject]))
async def list_payouts(
    asked: ListRequestDep,
    period: PeriodDep,
    status: Annotated[Status | None, Query()] = None,
) -> dict[str, Any]:
    """The environment's payouts, newest first."""
    found = await payouts.list(asked.session, asked.caller, asked.page, status, period)
    return asked.answer(found, payout_object)


@router.get("/payouts/{reference}", responses=answers(PayoutObject))
async def get_payout(reference: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    """One payout, by its reference or your `external_id`."""
    return ok(payout_object(await payouts.get(session, caller, reference)))


@test_helpers.post(
    "/test-helpers/payouts/{reference}/{outcome}", responses=answers(PayoutObject, Conflict)
)
async def decide_payout(
    reference: str,
    outcome: Literal["succeed", "fail"],
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
) -> dict[str, Any]:
    """Test keys: decides a pending payout (`succeed` or `fail`), as the operator would."""
    if caller.livemode:
        raise NotFound("Les aides de test n'existent qu'avec une clé de test.")
    decided = Outcome.SUCCEEDED if outcome == "succeed" else Outcome.FAILED
    payout = await payouts.force_outcome(session, runtime, caller, reference, decided)
    return ok(payout_object(payout))
