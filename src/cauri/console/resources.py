"""Payments, plans, payouts and refunds (cauri.staff.kinds): a search page for each, one
template for the four, and each one's detail page with its ledger postings, operator
exchanges, events and webhook deliveries.

Searching by the last digits of a customer's number is looking a customer up: it takes
`payments.look_up` (support and above); a viewer searches by everything else."""

from __future__ import annotations

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.auth import SignedIn, Staff
from cauri.console.errors import lacking
from cauri.console.pages import Pages
from cauri.console.rendering import render
from cauri.http import SessionDep
from cauri.signin.forms import WHOLE_FORM, Form
from cauri.staff.kinds import KINDS, Kind, look_up
from cauri.staff.roles import Permission, allows
from cauri.staff.search import SearchFilter

FIELDS = (
    "reference",
    "external_id",
    "merchant",
    "phone_digits",
    "status",
    "mode",
    "from",
    "to",
    "page",
)


pages = Pages()


def _wanted(form: Form, staff: SignedIn) -> SearchFilter:
    digits = form.optional("phone_digits")
    if digits is not None and not allows(staff.role, Permission.LOOK_UP_PAYMENTS):
        # Not a field of the viewer's form: the whole form's message.
        form.errors[WHOLE_FORM] = lacking(staff.role, Permission.LOOK_UP_PAYMENTS).message
        digits = None
    return SearchFilter(
        reference=form.optional("reference"),
        external_id=form.optional("external_id"),
        merchant_id=form.optional("merchant"),
        phone_digits=digits,
        status=form.optional("status"),
        livemode=form.livemode(),
        period=form.period(),
    )


async def _search(request: Request, staff: SignedIn, session: AsyncSession, kind: Kind) -> Response:
    """Every row while no filter is given, newest first; a refused filter: the form again
    with its message next to the field (422)."""
    form = Form.read(request, FIELDS)
    found = await look_up(request, session, kind, form, _wanted(form, staff))
    context = {
        "kind": kind,
        "form": form,
        "rows": found.rows,
        "pager": found.pager,
        "may_look_up": allows(staff.role, Permission.LOOK_UP_PAYMENTS),
    }
    return render(request, "signin/search.html", context, 422 if form.errors else 200)


def _register(kind: Kind) -> None:
    @pages.get(kind.path, Permission.READ, menu=kind.title)
    async def search_page(request: Request, staff: Staff, session: SessionDep) -> Response:
        return await _search(request, staff, session, kind)

    @pages.get(kind.path + "/{reference}", Permission.READ)
    async def detail_page(
        request: Request, staff: Staff, session: SessionDep, reference: str
    ) -> Response:
        found = await kind.detail(session, reference)
        return render(request, f"console/{kind.name}.html", {"kind": kind, "detail": found})


for _kind in KINDS:
    _register(_kind)
