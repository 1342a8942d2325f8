from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, created_or_replayed, ok
from cauri.kit import public_url
from cauri.kit.errors import Conflict, NotFound, PaymentFailed
from cauri.kit.openapi import ListEnvelope, answers
from cauri.kit.period_query import PeriodDep
from cauri.merchants.auth import CallerDep, PaymentCallerDep
from cauri.merchants.listing import ListRequestDep
from cauri.models import Payment
from cauri.operators.protocol import Outcome
from cauri.payments.schemas import (
    PaymentCreate,
    PaymentFilters,
    PaymentObject,
    payment_object,
)
from cauri.payments.service import payments

router = APIRouter(route_class=UnitOfWorkRoute, tags=["payments"])
test_helpers = APIRouter(route_class=UnitOfWorkRoute, tags=["test helpers"])

Status = Literal["pending", "succeeded", "refunded", "failed"]


def public_base_url(request: Request, runtime: RuntimeDep) -> str | None:
    return public_url.public_base_url(runtime.settings, request.scope.get("server"))


@router.post(
    "/payments",
    status_code=201,
    responses=answers(PaymentObject, PaymentFailed, status=201, replayed=True),
)
async def create_payment(
    body: PaymentCreate,
    request: Request,
    caller: PaymentCallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
) -> JSONResponse:
    """Creates a payment: Mobile Money debits the customer's number (201, `pending` or
    already `succeeded`; refused at once: 402 and the payment is `failed`); a card returns
    `payment_url`, the hosted page to send the customer to. With an `external_id` already
    used, the payment created then is returned (200)."""
    return await payments.create(
        session, runtime, caller, body, public_base_url(request, runtime), _created_or_replayed
    )


def _created_or_replayed(payment: Payment, created: bool) -> JSONResponse:
    return created_or_replayed(payment_object(payment), created)


@router.get("/payments", responses=answers(ListEnvelope[PaymentObject]))
async def list_payments(
    asked: ListRequestDep,
    period: PeriodDep,
    status: Annotated[Status | None, Query()] = None,
    operator: Annotated[
        str | None, Query(max_length=64, description="Code opérateur, casse indifférente.")
    ] = None,
    external_id: Annotated[str | None, Query(max_length=255)] = None,
) -> dict[str, Any]:
    """The account's payments in the key's environment, newest first; the filters combine."""
    filters = PaymentFilters(status, period, operator, external_id)
    found = await payments.list(asked.session, asked.caller, asked.page, filters)
    return asked.answer(found, payment_object)


@router.get("/payments/{reference}", responses=answers(PaymentObject))
async def get_payment(reference: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    """One payment, by its reference or your `external_id`."""
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
@test_helpers.post(
    "/test-helpers/payments/{reference}/succeed", responses=answers(PaymentObject, Conflict)
)
async def succeed_payment(
    reference: str, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    """Test keys: decides a pending payment as succeeded, as the operator would."""
    return await _decide(reference, Outcome.SUCCEEDED, caller, session, runtime)


@test_helpers.post(
    "/test-helpers/payments/{reference}/fail", responses=answers(PaymentObject, Conflict)
)
async def fail_payment(
    reference: str, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    """Test keys: decides a pending payment as failed, as the operator would."""
    return await _decide(reference, Outcome.FAILED, caller, session, runtime)
