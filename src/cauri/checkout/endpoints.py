from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from cauri.checkout.schemas import CheckoutSessionCreate, CheckoutSessionObject, SessionFilters
from cauri.checkout.service import checkout_sessions
from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.kit import public_url
from cauri.kit.errors import Conflict
from cauri.kit.openapi import ListEnvelope, answers
from cauri.kit.page_query import PageDep
from cauri.kit.pagination import listing
from cauri.kit.period_query import PeriodDep
from cauri.merchants.auth import CallerDep

router = APIRouter(route_class=UnitOfWorkRoute, tags=["checkout sessions"])

Status = Literal["open", "complete", "expired"]


@router.post(
    "/checkout-sessions",
    status_code=201,
    responses=answers(CheckoutSessionObject, status=201, replayed=True),
)
async def create_checkout_session(
    body: CheckoutSessionCreate,
    request: Request,
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
) -> JSONResponse:
    """Opens a checkout session: send the customer to its `url`, where they choose how to pay
    among the modes open to your account (201). It completes with the first payment that
    succeeds (`checkout_session.completed`), or expires. With an `external_id` already used,
    the session opened then is returned (200)."""
    base_url = public_url.public_base_url(runtime.settings, request.scope.get("server"))
    checkout, created = await checkout_sessions.create(session, runtime, caller, body, base_url)
    (shown,) = await checkout_sessions.objects(session, [checkout])
    return JSONResponse(ok(shown), status_code=201 if created else 200)


@router.get("/checkout-sessions", responses=answers(ListEnvelope[CheckoutSessionObject]))
async def list_checkout_sessions(
    caller: CallerDep,
    session: SessionDep,
    page: PageDep,
    period: PeriodDep,
    status: Annotated[Status | None, Query()] = None,
) -> dict[str, Any]:
    """The account's checkout sessions in the key's environment, newest first."""
    filters = SessionFilters(status, period)
    rows, total = await checkout_sessions.list(session, caller, page, filters)
    return listing(await checkout_sessions.objects(session, rows), page, total)


@router.get("/checkout-sessions/{reference}", responses=answers(CheckoutSessionObject))
async def get_checkout_session(
    reference: str, caller: CallerDep, session: SessionDep
) -> dict[str, Any]:
    """One checkout session, by its reference or your `external_id`."""
    checkout = await checkout_sessions.get(session, caller, reference)
    (shown,) = await checkout_sessions.objects(session, [checkout])
    return ok(shown)


@router.post(
    "/checkout-sessions/{reference}/expire",
    responses=answers(CheckoutSessionObject, Conflict),
)
async def expire_checkout_session(
    reference: str, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    """Closes an open session: its page takes no payment any more (an attempt still pending
    that succeeds is refunded). 409 once complete."""
    checkout = await checkout_sessions.expire(session, runtime, caller, reference)
    (shown,) = await checkout_sessions.objects(session, [checkout])
    return ok(shown)
