"""The hosted card payment page (`payment_url`). In test mode the tester picks the outcome.

DESIGN: the page shows two buttons; each posts `outcome=succeeded|failed` to
`POST /pay/{reference}`, which then redirects to `return_url`. The redirect carries the
payment's `reference` and `status` in its query, so the merchant's page can tell the
customer at once (the merchant still confirms with `GET /payments/{reference}` or the
webhook: a query string is no proof of payment).
"""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from cauri.kit.errors import Conflict, NotFound
from cauri.kit.http import RuntimeDep, SessionDep
from cauri.kit.ids import parse_uuid
from cauri.models import Merchant, Payment
from cauri.operators import catalogue
from cauri.operators.protocol import Outcome
from cauri.payments.service import payments
from cauri.web.rendering import PageRoute, format_amount, page

router = APIRouter(route_class=PageRoute, include_in_schema=False)

STATUS_FR = {
    "pending": "en attente",
    "succeeded": "réussi",
    "failed": "refusé",
    "refunded": "remboursé",
}


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


@router.get("/pay/{reference}", response_class=HTMLResponse)
async def payment_page(request: Request, reference: str, session: SessionDep) -> Response:
    payment = await _card_payment(session, reference)
    merchant = await session.get(Merchant, payment.merchant_id)
    mode = catalogue.find(payment.operator)
    customer = payment.customer
    holder = " ".join(filter(None, (customer.get("firstname"), customer.get("lastname"))))
    return page(
        request,
        "pay.html",
        {
            "payment": payment,
            "merchant_name": merchant.name if merchant else "",
            "mode_name": mode.name if mode else payment.operator,
            "holder": holder,
            "amount": format_amount(payment.amount, payment.currency),
            "fee": format_amount(payment.fee_amount, payment.currency),
            "total": format_amount(payment.amount + payment.fee_amount, payment.currency),
            "status_fr": STATUS_FR.get(payment.status, payment.status),
            "return_url": return_target(payment),
        },
    )


@router.post("/pay/{reference}")
async def decide(
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
    settled = await payments.force_outcome(
        session, runtime, payment.id, Outcome(outcome), "hosted_page_test"
    )
    return RedirectResponse(return_target(settled) or f"/pay/{payment.id}", status_code=303)
