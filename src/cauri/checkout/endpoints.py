from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from cauri.checkout.links import payment_links
from cauri.checkout.schemas import (
    CheckoutSessionCreate,
    CheckoutSessionObject,
    LinkFilters,
    PaymentLinkCreate,
    PaymentLinkObject,
    SessionFilters,
    link_object,
)
from cauri.checkout.service import checkout_sessions
from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, created_or_replayed, ok
from cauri.kit.errors import Conflict
from cauri.kit.openapi import ListEnvelope, answers
from cauri.kit.pagination import listing
from cauri.kit.period_query import PeriodDep
from cauri.merchants.auth import CallerDep
from cauri.merchants.listing import ListRequestDep
from cauri.payments.endpoints import public_base_url

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
    base_url = public_base_url(request, runtime)
    checkout, created = await checkout_sessions.create(session, runtime, caller, body, base_url)
    (shown,) = await checkout_sessions.objects(session, [checkout])
    return created_or_replayed(shown, created)


@router.get("/checkout-sessions", responses=answers(ListEnvelope[CheckoutSessionObject]))
async def list_checkout_sessions(
    asked: ListRequestDep,
    period: PeriodDep,
    status: Annotated[Status | None, Query()] = None,
) -> dict[str, Any]:
    """The account's checkout sessions in the key's environment, newest first."""
    filters = SessionFilters(status, period)
    rows, total = await checkout_sessions.list(asked.session, asked.caller, asked.page, filters)
    return listing(await checkout_sessions.objects(asked.session, rows), asked.page, total)


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


links_router = APIRouter(route_class=UnitOfWorkRoute, tags=["payment links"])


@links_router.post(
    "/payment-links",
    status_code=201,
    responses=answers(PaymentLinkObject, status=201, replayed=True),
)
async def create_payment_link(
    body: PaymentLinkCreate,
    request: Request,
    caller: CallerDep,
    session: SessionDep,
    runtime: RuntimeDep,
) -> JSONResponse:
    """Makes a payment link to share (`url`, and `qr_code_url` for print): each visit, once
    the customer goes on, opens a checkout session (201). `amount` null: the customer types
    it. With an `external_id` already used, the link made then is returned (200)."""
    base_url = public_base_url(request, runtime)
    link, created = await payment_links.create(session, runtime, caller, body, base_url)
    return created_or_replayed(link_object(link), created)


@links_router.get("/payment-links", responses=answers(ListEnvelope[PaymentLinkObject]))
async def list_payment_links(
    asked: ListRequestDep,
    period: PeriodDep,
    active: Annotated[bool | None, Query()] = None,
) -> dict[str, Any]:
    """The account's payment links in the key's environment, newest first."""
    filters = LinkFilters(active, period)
    found = await payment_links.list(asked.session, asked.caller, asked.page, filters)
    return asked.answer(found, link_object)


@links_router.get("/payment-links/{reference}", responses=answers(PaymentLinkObject))
async def get_payment_link(
    reference: str, caller: CallerDep, session: SessionDep
) -> dict[str, Any]:
    """One payment link, by its reference or your `external_id`."""
    return ok(link_object(await payment_links.get(session, caller, reference)))


@links_router.post("/payment-links/{reference}/deactivate", responses=answers(PaymentLinkObject))
async def deactivate_payment_link(
    reference: str, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    """No visit opens a session any more (sessions already open stay payable)."""
    link = await payment_links.deactivate(session, runtime, caller, reference)
    return ok(link_object(link))
