"""The four kinds of resources people look up, on the console and the dashboard alike:
payments, installment plans, payouts and refunds; each one's search (cauri.staff.search),
detail (cauri.staff.details) and row in a list of results."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import Any, get_args

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import InvalidRequest, NotFound
from cauri.kit.pagination import Page
from cauri.models import InstallmentPlan, Payment, Payout, Refund
from cauri.models.payouts import PAYOUT_STATUSES
from cauri.models.plans import PlanStatus
from cauri.payments.endpoints import Status as PaymentStatus
from cauri.refunds.endpoints import Status as RefundStatus
from cauri.signin.forms import WHOLE_FORM, Form, Pager, pager
from cauri.staff import details, search
from cauri.staff.search import SearchFilter

PER_PAGE = 25


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


def payment_row(row: Payment) -> Summary:
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


def plan_row(row: InstallmentPlan) -> Summary:
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


def payout_row(row: Payout) -> Summary:
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


def refund_row(row: Refund) -> Summary:
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
    path: str  # under the pages' prefix, the search's; a detail is at <path>/<reference>
    title: str  # the menu's and the search page's
    one: str  # "le paiement": the detail page's title
    amount_label: str
    statuses: Sequence[str]
    search: Callable[[AsyncSession, SearchFilter, Page], Awaitable[tuple[Sequence[Any], int]]]
    summary: Callable[[Any], Summary]
    detail: Callable[[AsyncSession, str], Awaitable[Any]]
    # Its detail page's template: `<folder>/<name>.html` (the console's, the dashboard's).
    name: str
    # The resource a detail is about (whose merchant and environment it is).
    subject: Callable[[Any], Payment | InstallmentPlan | Payout | Refund]


KINDS = (
    Kind(
        "/payments",
        "Paiements",
        "Paiement",
        "Montant",
        get_args(PaymentStatus),
        search.payments,
        payment_row,
        details.payment,
        "payment",
        attrgetter("payment"),
    ),
    Kind(
        "/plans",
        "Plans",
        "Plan de paiement",
        "Objectif",
        [status.value for status in PlanStatus],
        search.plans,
        plan_row,
        details.plan,
        "plan",
        attrgetter("plan"),
    ),
    Kind(
        "/payouts",
        "Transferts",
        "Transfert",
        "Montant",
        PAYOUT_STATUSES,
        search.payouts,
        payout_row,
        details.payout,
        "payout",
        attrgetter("payout"),
    ),
    Kind(
        "/refunds",
        "Remboursements",
        "Remboursement",
        "Montant",
        get_args(RefundStatus),
        search.refunds,
        refund_row,
        details.refund,
        "refund",
        attrgetter("refund"),
    ),
)


@dataclass(frozen=True)
class Results:
    rows: Sequence[Summary]
    pager: Pager | None  # None: the search did not run (the form was refused)


async def look_up(
    request: Request, session: AsyncSession, kind: Kind, form: Form, wanted: SearchFilter
) -> Results:
    """The search a form asks for, newest first, in pages of PER_PAGE; a refusal (the form's
    own, or the service's, e.g. too few digits) is the form's, next to its field."""
    page = form.page(PER_PAGE)
    if form.errors:
        return Results([], None)
    try:
        found, total = await kind.search(session, wanted, page)
    except InvalidRequest as invalid:
        form.refuse(invalid, {"merchant_id": "merchant"})
        return Results([], None)
    except NotFound as unknown:  # the merchant: the only thing a search looks up
        form.errors["merchant" if "merchant" in form.values else WHOLE_FORM] = unknown.message
        return Results([], None)
    return Results([kind.summary(row) for row in found], pager(request, page, total))
