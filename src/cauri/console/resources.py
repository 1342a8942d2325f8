"""Payments, plans, payouts and refunds: a search page for each (cauri.staff.search), one
template for the four, and each one's detail page (cauri.staff.details) with its ledger
postings, operator exchanges, events and webhook deliveries.

Searching by the last digits of a customer's number is looking a customer up: it takes
`payments.look_up` (support and above); a viewer searches by everything else."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, get_args

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.auth import SignedIn, Staff
from cauri.console.errors import Forbidden
from cauri.console.forms import WHOLE_FORM, Form, Pager, pager
from cauri.console.pages import Pages
from cauri.console.rendering import render
from cauri.http import SessionDep
from cauri.kit.errors import InvalidRequest, NotFound
from cauri.kit.pagination import Page
from cauri.models import InstallmentPlan, Payment, Payout, Refund
from cauri.models.payouts import PAYOUT_STATUSES
from cauri.models.plans import PlanStatus
from cauri.payments.endpoints import Status as PaymentStatus
from cauri.refunds.endpoints import Status as RefundStatus
from cauri.staff import details, search
from cauri.staff.roles import Permission, allows
from cauri.staff.search import SearchFilter

PER_PAGE = 25
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
# The services' names of the fields the form names otherwise.
RENAMED = {"merchant_id": "merchant"}


@dataclass(frozen=True)
class Summary:
    """One row of a search's results, whatever the kind."""

    reference: str
    merchant_id: str
    livemode: bool
    created_at: datetime
    status: str
    amount: int
    currency: str
    operator: str | None
    phone_number: str | None
    external_id: str | None


def _payment(row: Payment) -> Summary:
    return Summary(
        str(row.id),
        row.merchant_id,
        row.livemode,
        row.created_at,
        row.status,
        row.amount,
        row.currency,
        row.operator,
        row.phone_number,
        row.external_id,
    )


def _plan(row: InstallmentPlan) -> Summary:
    return Summary(
        str(row.id),
        row.merchant_id,
        row.livemode,
        row.created_at,
        row.status,
        row.target_amount,
        row.currency,
        None,
        None,
        row.external_id,
    )


def _payout(row: Payout) -> Summary:
    return Summary(
        row.reference,
        row.merchant_id,
        row.livemode,
        row.created_at,
        row.status,
        row.amount,
        row.currency,
        row.operator,
        row.phone_number,
        row.external_id,
    )


def _refund(row: Refund) -> Summary:
    return Summary(
        row.reference,
        row.merchant_id,
        row.livemode,
        row.created_at,
        row.status,
        row.amount,
        row.currency,
        row.operator,
        row.phone_number,
        None,
    )


@dataclass(frozen=True)
class Kind:
    path: str  # under /console, the search's; a detail is at <path>/<reference>
    title: str  # the menu's and the search page's
    one: str  # "le paiement": the detail page's title
    amount_label: str
    statuses: Sequence[str]
    search: Callable[[AsyncSession, SearchFilter, Page], Awaitable[tuple[Sequence[Any], int]]]
    summary: Callable[[Any], Summary]
    detail: Callable[[AsyncSession, str], Awaitable[Any]]
    template: str


KINDS = (
    Kind(
        "/payments",
        "Paiements",
        "Paiement",
        "Montant",
        get_args(PaymentStatus),
        search.payments,
        _payment,
        details.payment,
        "console/payment.html",
    ),
    Kind(
        "/plans",
        "Plans",
        "Plan de paiement",
        "Objectif",
        [status.value for status in PlanStatus],
        search.plans,
        _plan,
        details.plan,
        "console/plan.html",
    ),
    Kind(
        "/payouts",
        "Transferts",
        "Transfert",
        "Montant",
        PAYOUT_STATUSES,
        search.payouts,
        _payout,
        details.payout,
        "console/payout.html",
    ),
    Kind(
        "/refunds",
        "Remboursements",
        "Remboursement",
        "Montant",
        get_args(RefundStatus),
        search.refunds,
        _refund,
        details.refund,
        "console/refund.html",
    ),
)

pages = Pages()


def _wanted(form: Form, staff: SignedIn) -> SearchFilter:
    digits = form.optional("phone_digits")
    if digits is not None and not allows(staff.role, Permission.LOOK_UP_PAYMENTS):
        # Not a field of the viewer's form: the whole form's message.
        form.errors[WHOLE_FORM] = Forbidden.lacking(staff.role, Permission.LOOK_UP_PAYMENTS).message
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
    wanted = _wanted(form, staff)
    page = form.page(PER_PAGE)
    rows: list[Summary] = []
    pages_of: Pager | None = None
    if not form.errors:
        try:
            found, total = await kind.search(session, wanted, page)
        except InvalidRequest as invalid:
            form.refuse(invalid, RENAMED)
        except NotFound as unknown:  # the merchant: the only thing a search looks up
            form.errors["merchant"] = unknown.message
        else:
            rows = [kind.summary(row) for row in found]
            pages_of = pager(request, page, total)
    context = {
        "kind": kind,
        "form": form,
        "rows": rows,
        "pager": pages_of,
        "may_look_up": allows(staff.role, Permission.LOOK_UP_PAYMENTS),
    }
    return render(request, "console/search.html", context, 422 if form.errors else 200)


def _register(kind: Kind) -> None:
    @pages.get(kind.path, Permission.READ, menu=kind.title)
    async def search_page(request: Request, staff: Staff, session: SessionDep) -> Response:
        return await _search(request, staff, session, kind)

    @pages.get(kind.path + "/{reference}", Permission.READ)
    async def detail_page(
        request: Request, staff: Staff, session: SessionDep, reference: str
    ) -> Response:
        found = await kind.detail(session, reference)
        return render(request, kind.template, {"kind": kind, "detail": found})


for _kind in KINDS:
    _register(_kind)
