"""The hosted card payment page (`payment_url`). In test mode the tester picks the outcome."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Annotated, Literal

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from cauri.kit.errors import NotFound
from cauri.kit.http import RuntimeDep, SessionDep, UnitOfWorkRoute
from cauri.kit.money import to_major
from cauri.models import Payment
from cauri.operators import catalogue
from cauri.operators.protocol import Outcome
from cauri.payments.service import payments

router = APIRouter(route_class=UnitOfWorkRoute, include_in_schema=False)
templates = Jinja2Templates(directory=Path(__file__).parent / "templates")

STATUS_FR = {"succeeded": "réussi", "failed": "refusé", "refunded": "remboursé"}


async def _card_payment(session: SessionDep, reference: str) -> Payment:
    try:
        payment_id = uuid.UUID(reference)
    except ValueError:
        raise NotFound("Paiement introuvable.") from None
    payment = await session.get(Payment, payment_id)
    if payment is None or payment.payment_url is None:
        raise NotFound("Paiement introuvable.")
    return payment


@router.get("/pay/{reference}", response_class=HTMLResponse)
async def payment_page(request: Request, reference: str, session: SessionDep) -> Response:
    payment = await _card_payment(session, reference)
    mode = catalogue.find(payment.operator)
    return templates.TemplateResponse(
        request,
        "pay.html",
        {
            "payment": payment,
            "mode_name": mode.name if mode else payment.operator,
            "total": to_major(payment.amount + payment.fee_amount, payment.currency),
            "status_fr": STATUS_FR.get(payment.status, payment.status),
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
    await payments.force_outcome(session, runtime, payment.id, Outcome(outcome), "hosted_page_test")
    target = payment.return_url or f"/pay/{payment.id}"
    return RedirectResponse(target, status_code=303)
