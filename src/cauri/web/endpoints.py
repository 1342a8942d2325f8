"""The hosted card payment page (`payment_url`). In test mode the tester picks the outcome.

DESIGN: the page shows two buttons; each posts `outcome=succeeded|failed` to
`POST /pay/{reference}`, which then redirects to `return_url`. The redirect carries the
payment's `reference` and `status` in its query, so the merchant's page can tell the
customer at once (the merchant still confirms with `GET /payments/{reference}` or the
webhook: a query string is no proof of payment).

An instalment of a plan that no longer takes one (cancelled, expiring, expired, completed)
cannot be paid here: the page says so (409); a decision posted for it fails the instalment,
so that it does not hang until its card TTL.
"""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.http import RuntimeDep, SessionDep
from cauri.kit.errors import Conflict, NotFound
from cauri.kit.ids import parse_uuid
from cauri.merchants.contract import FeeBearer
from cauri.models import InstallmentPlan, Merchant, Payment
from cauri.operators import catalogue
from cauri.operators.protocol import Outcome
from cauri.payments.service import payments
from cauri.plans import settlement as plan_settlement
from cauri.runtime import Runtime
from cauri.web.rendering import PageRoute, format_amount, merchant_shown, page

router = APIRouter(route_class=PageRoute, include_in_schema=False)

STATUS_FR = {
    "pending": "en attente",
    "succeeded": "réussi",
    "failed": "refusé",
    "refunded": "remboursé",
}

PLAN_CLOSED_REASON = "plan_not_actively_pending"
PLAN_CLOSED_TITLE = "Versement impossible"
PLAN_CLOSED = (
    "Ce versement ne peut plus être payé : son plan de paiement n'accepte plus de versement "
    "(annulé, expiré ou soldé). Aucune somme n'a été débitée."
)


async def _card_payment(session: SessionDep, reference: str) -> Payment:
    payment_id = parse_uuid(reference)
    payment = await session.get(Payment, payment_id) if payment_id else None
    if payment is None or payment.payment_url is None:
        raise NotFound("Ce lien de paiement ne correspond à aucun paiement.")
    return payment


def return_target(payment: Payment) -> str | None:
    """The merchant's return_url with the payment's reference and status added to its query."""
    if payment.return_url is None:
        return None
    parts = urlsplit(payment.return_url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [("reference", str(payment.id)), ("status", payment.status)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _plan_closed(request: Request) -> Response:
    context = {"title": PLAN_CLOSED_TITLE, "message": PLAN_CLOSED}
    return page(request, "error.html", context, status_code=409)


async def _closed_instalment(session: AsyncSession, runtime: Runtime, payment: Payment) -> bool:
    """Whether `payment` is a pending instalment whose plan no longer takes one. Read only:
    a page view changes nothing."""
    if payment.plan_id is None or payment.status != Outcome.PENDING:
        return False
    plan = await session.get(InstallmentPlan, payment.plan_id)
    assert plan is not None  # the foreign key guarantees it
    return not plan_settlement.takes_instalments(plan, runtime.clock.now())


async def _fail_closed_instalment(
    session: AsyncSession, runtime: Runtime, payment: Payment
) -> bool:
    """Fails a pending test instalment whose plan no longer takes one; whether it did. Locks
    the payment, then the plan (whose expiry begins here if it is due), as settling does."""
    if payment.plan_id is None or payment.livemode:
        return False
    locked = await payments.lock(session, payment.id)
    if locked is None or locked.status != Outcome.PENDING:
        return False
    if await plan_settlement.accepts_instalment(session, runtime, payment.plan_id):
        return False
    await payments.settle(session, runtime, locked, Outcome.FAILED, PLAN_CLOSED_REASON)
    return True


async def _live_page(request: Request, session: AsyncSession, payment: Payment) -> Response | None:
    """A live card payment is paid on its operator's page (CinetPay): the customer is sent
    there while the payment waits, and back to the merchant once it is decided; None while
    the operator has given no page (Cauri's page then says the payment is not available)."""
    if payment.status != Outcome.PENDING:
        return _back_to_merchant(request, payment)
    page_url = await payments.operator_page(session, payment)
    return None if page_url is None else RedirectResponse(page_url, status_code=303)


def _back_to_merchant(request: Request, payment: Payment) -> Response:
    """The merchant's return_url with the payment's reference and status; without one, a
    page that says where the payment stands."""
    target = return_target(payment)
    if target is not None:
        return RedirectResponse(target, status_code=303)
    title = f"Paiement {STATUS_FR.get(payment.status, payment.status)}"
    return page(request, "error.html", {"title": title, "message": title + "."})


@router.api_route("/pay/{reference}/return", methods=["GET", "POST"])
async def back_from_operator(request: Request, reference: str, session: SessionDep) -> Response:
    """Where the operator's page sends the customer back (CinetPay POSTs its transaction_id
    and token; nothing it sends is trusted): on to the merchant, with the payment as it
    stands (the operator's notification and status check decide it)."""
    return _back_to_merchant(request, await _card_payment(session, reference))


@router.get("/pay/{reference}", response_class=HTMLResponse)
async def payment_page(
    request: Request, reference: str, session: SessionDep, runtime: RuntimeDep
) -> Response:
    payment = await _card_payment(session, reference)
    if payment.livemode and (handed := await _live_page(request, session, payment)):
        return handed
    if await _closed_instalment(session, runtime, payment):
        return _plan_closed(request)
    merchant = await session.get(Merchant, payment.merchant_id)
    mode = catalogue.find(payment.operator)
    customer = payment.customer
    holder = " ".join(filter(None, (customer.get("firstname"), customer.get("lastname"))))
    return page(
        request,
        "pay.html",
        {
            "payment": payment,
            **merchant_shown(merchant),
            "mode_name": mode.name if mode else payment.operator,
            "card": mode is None or mode.is_card,
            "holder": holder,
            "amount": format_amount(payment.amount, payment.currency),
            # The customer sees a commission only when they pay it.
            "fee": format_amount(payment.fee_amount, payment.currency)
            if payment.fee_bearer == FeeBearer.CUSTOMER
            else None,
            "total": format_amount(payment.total_amount, payment.currency),
            "status_fr": STATUS_FR.get(payment.status, payment.status),
            "return_url": return_target(payment),
        },
    )


@router.post("/pay/{reference}")
async def decide(
    request: Request,
    reference: str,
    outcome: Annotated[Literal["succeeded", "failed"], Form()],
    session: SessionDep,
    runtime: RuntimeDep,
) -> Response:
    payment = await _card_payment(session, reference)
    if payment.status != Outcome.PENDING:
        # A second click, or the back button: say so in the customer's words. A decision
        # racing this one is still refused by force_outcome, under the row's lock.
        raise Conflict(f"Ce paiement est déjà {STATUS_FR[payment.status]}.")
    if await _fail_closed_instalment(session, runtime, payment):
        return _plan_closed(request)  # a response, not an error: the failure is kept
    settled = await payments.force_outcome(
        session, runtime, payment.id, Outcome(outcome), "hosted_page_test"
    )
    return RedirectResponse(return_target(settled) or f"/pay/{payment.id}", status_code=303)
