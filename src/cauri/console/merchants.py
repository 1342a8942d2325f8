"""Merchants, read only: the list with a search by id or name and by status, and one
merchant's account (keys by their hint, fee rules, limits, payout account, webhook
endpoints, balances per environment and currency). Changing them: the staff's actions."""

from __future__ import annotations

from fastapi import Request, Response

from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import render
from cauri.http import SessionDep
from cauri.kit.errors import InvalidRequest
from cauri.models.merchants import MERCHANT_STATUSES
from cauri.signin.forms import Form
from cauri.staff import reads
from cauri.staff.roles import Permission

pages = Pages()


@pages.get("/merchants", Permission.READ, menu="Marchands")
async def merchants(request: Request, staff: Staff, session: SessionDep) -> Response:
    form = Form.read(request, ("q", "status"))
    try:
        found = await reads.merchants(session, form.optional("status"), form.optional("q"))
    except InvalidRequest as invalid:
        form.refuse(invalid)
        found = []
    context = {"form": form, "merchants": found, "statuses": MERCHANT_STATUSES}
    return render(request, "console/merchants.html", context, 422 if form.errors else 200)


@pages.get("/merchants/{merchant_id}", Permission.READ)
async def merchant(
    request: Request, staff: Staff, session: SessionDep, merchant_id: str
) -> Response:
    seen = await reads.merchant_overview(session, merchant_id)
    return render(request, "console/merchant.html", {"seen": seen})
