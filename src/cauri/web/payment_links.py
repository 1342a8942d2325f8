"""A payment link's page (`/l/{code}`, issue 25): what it is for and how much, and a button
(with the amount field when the link has none). Visiting creates nothing; going on opens a
checkout session for this customer and sends them to its page. `/l/{code}/qr.svg` is the
link as a QR code, for print."""

from __future__ import annotations

import io
from typing import Annotated, Any

import segno
from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.checkout.links import payment_links
from cauri.checkout.service import takes_payments
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.errors import Conflict, InvalidRequest, NotFound
from cauri.models import Merchant, PaymentLink
from cauri.runtime import Runtime
from cauri.web.checkout import base_url_of, form_token, nonce_of, token_valid, with_nonce
from cauri.web.language import FIELD_HINTS
from cauri.web.rendering import PageRoute, format_amount, merchant_shown, page

router = APIRouter(route_class=PageRoute, include_in_schema=False)


async def _show(
    request: Request,
    session: AsyncSession,
    runtime: Runtime,
    link: PaymentLink,
    typed: str = "",
    errors: dict[str, list[str]] | None = None,
    status_code: int = 200,
) -> Response:
    merchant = await session.get(Merchant, link.merchant_id)
    nonce = nonce_of(request)
    context: dict[str, Any] = {
        "link": link,
        **merchant_shown(merchant),
        "amount": None if link.amount is None else format_amount(link.amount, link.currency),
        "min_amount": format_amount(link.min_amount, link.currency) if link.min_amount else None,
        "max_amount": format_amount(link.max_amount, link.currency) if link.max_amount else None,
        "test_mode": not link.livemode,
        "open": takes_payments(link, runtime),
        "typed": typed,
        "errors": errors or {},
        "csrf": form_token(nonce, link.code),
        "hints": FIELD_HINTS,
    }
    shown = page(request, "payment_link.html", context, status_code if context["open"] else 410)
    return with_nonce(shown, nonce)


@router.get("/l/{code}")
async def link_page(
    request: Request, code: str, session: SessionDep, runtime: RuntimeDep
) -> Response:
    return await _show(request, session, runtime, await payment_links.find(session, code))


@router.post("/l/{code}")
async def go_on(
    request: Request,
    code: str,
    session: SessionDep,
    runtime: RuntimeDep,
    csrf: Annotated[str | None, Form(max_length=128)] = None,
    amount: Annotated[str | None, Form(max_length=32)] = None,
) -> Response:
    link = await payment_links.find(session, code)
    if not token_valid(request, code, csrf):
        expired = {"form": ["Le formulaire a expiré : envoyez-le de nouveau."]}
        return await _show(request, session, runtime, link, amount or "", expired, 403)
    try:
        checkout = await payment_links.visit(
            session, runtime, code, amount, base_url_of(request, runtime)
        )
    except InvalidRequest as invalid:
        errors = invalid.details or {"form": [invalid.message]}
        return await _show(request, session, runtime, link, amount or "", errors, 422)
    except Conflict:
        return await _show(request, session, runtime, link)
    return RedirectResponse(f"/checkout/{checkout.reference}", status_code=303)


@router.get("/l/{code}/qr.svg")
async def link_qr_code(code: str, session: SessionDep) -> Response:
    link = await payment_links.find(session, code)
    svg = io.BytesIO()
    segno.make(link.url, error="m").save(svg, kind="svg", scale=8, border=2)
    return Response(
        svg.getvalue(),
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"},
    )


@router.get("/logos/{merchant_id}.png")
async def merchant_logo(session: SessionDep, merchant_id: str) -> Response:
    """A merchant's logo, as its customers' pages show it: the PNG Cauri re-encoded from the
    image its team sent (cauri.team.settings); cached a day (its address changes with it)."""
    found = await session.scalar(select(Merchant.logo).where(Merchant.id == merchant_id))
    if found is None:
        raise NotFound("Ce logo n'existe pas.")
    return Response(
        found, media_type="image/png", headers={"Cache-Control": "public, max-age=86400"}
    )
