"""The merchant's monthly statements, per currency and environment (owners and finance): the
opening balance, every movement of the balance added up by kind (the commissions taken from
the merchant on their own line), the closing balance; as a page, a printable page and a CSV
of every line with the balance after it. From the ledger's lines (cauri.balance.transactions),
so that the figures are the ledger's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.balance.transactions import Line, statement, stream
from cauri.dashboard.acting import record_export
from cauri.dashboard.auth import SignedIn, require
from cauri.dashboard.rendering import DashboardRoute, render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.errors import CauriError
from cauri.kit.money import decimal_text
from cauri.kit.months import Month
from cauri.ledger import periods
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from cauri.signin.downloads import csv_file
from cauri.signin.forms import Form
from cauri.staff.exports import csv_line
from cauri.team.roles import Permission

FIELDS = ("month", "currency")
CURRENCIES = ("XOF", "XAF")
# Lines shown under the figures: the page's first ones, the printable page's (a month of a
# busy account is for the CSV).
SHOWN, PRINTED = 100, 2000
# In the order a statement lists them: money in, then out, then what came back.
TYPE_NAMES_FR = {
    "payment": "Encaissements",
    "plan_release": "Plans soldés (séquestre versé)",
    "topup": "Approvisionnements",
    "refund": "Remboursements",
    "payout": "Transferts",
    "refund_reversal": "Remboursements échoués (recrédités)",
    "payout_reversal": "Transferts échoués (recrédités)",
}
_ORDER = {kind: rank for rank, kind in enumerate(TYPE_NAMES_FR)}
CSV_COLUMNS = ("created_at", "type", "source", "amount", "fee", "net", "currency", "balance_after")

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Finance = Annotated[SignedIn, Depends(require(Permission.STATEMENTS))]


async def _chosen(form: Form, session: AsyncSession, runtime: Runtime) -> tuple[Month, str]:
    """The month and currency asked for (this month, XOF, when not), shown in the form; a
    month whose postings were archived (`cauri archive`) is refused on its field."""
    month = Month.of(runtime.clock.now())
    if form.values["month"]:
        try:
            asked = Month.parse(form.values["month"])
        except CauriError as error:
            form.refuse(error)
        else:
            archived = await periods.archived_through(session)
            if archived is not None and asked <= archived:
                form.errors["month"] = f"{asked} est archivé : son relevé n'est plus tenu ici."
            else:
                month = asked
    currency = form.values["currency"] or CURRENCIES[0]
    if currency not in CURRENCIES:
        form.errors["currency"] = f"Devise inconnue : {currency}."
        currency = CURRENCIES[0]
    form.values["month"] = form.values["month"] or month.name
    form.values["currency"] = currency
    return month, currency


async def _lines(
    session: AsyncSession, member: SignedIn, livemode: bool, currency: str, month: Month, most: int
) -> list[Line]:
    found = stream(session, member.merchant_id, livemode, currency, month, most)
    return [line async for line in found]


async def _page(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    runtime: Runtime,
    livemode: bool,
    template: str,
    most: int,
) -> Response:
    form = Form.read(request, FIELDS)
    month, currency = await _chosen(form, session, runtime)
    figures = await statement(session, member.merchant_id, livemode, currency, month)
    context = {
        "merchant": await merchants.get(session, member.merchant_id),
        "livemode": livemode,
        "form": form,
        "statement": figures,
        "totals": sorted(figures.totals, key=lambda t: (_ORDER.get(t.type, len(_ORDER)), t.type)),
        "lines": await _lines(session, member, livemode, currency, month, most),
        "most": most,
        "count": sum(total.count for total in figures.totals),
        "type_name": lambda kind: TYPE_NAMES_FR.get(kind, kind),
        "currencies": [(currency, currency) for currency in CURRENCIES],
    }
    return render(request, template, context, 422 if form.errors else 200)


async def _csv_lines(
    session: AsyncSession, merchant_id: str, livemode: bool, currency: str, month: Month
) -> AsyncIterator[str]:
    """Every line of the month, with the balance after it."""
    figures = await statement(session, merchant_id, livemode, currency, month)
    balance = figures.opening
    yield csv_line(CSV_COLUMNS)
    async for line in stream(session, merchant_id, livemode, currency, month):
        balance += line.net
        yield csv_line(
            (
                line.created_at,
                line.type,
                line.source,
                decimal_text(line.amount, currency),
                decimal_text(line.fee, currency),
                decimal_text(line.net, currency),
                currency,
                decimal_text(balance, currency),
            )
        )


def _register(mode_path: str, livemode: bool) -> None:
    @router.get(mode_path + "/statements")
    async def statement_page(
        request: Request, member: Finance, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        return await _page(
            request, member, session, runtime, livemode, "dashboard/statement.html", SHOWN
        )

    @router.get(mode_path + "/statements/print")
    async def printable(
        request: Request, member: Finance, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        return await _page(
            request, member, session, runtime, livemode, "dashboard/statement_print.html", PRINTED
        )

    @router.get(mode_path + "/statements/csv")
    async def download(
        request: Request, member: Finance, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        form = Form.read(request, FIELDS)
        month, currency = await _chosen(form, session, runtime)
        if form.errors:  # the page, saying why
            return await statement_page(request, member, session, runtime)
        environment = "live" if livemode else "test"
        name = f"releve-{environment}-{currency}-{month.name}"
        asked = {"kind": "statement", "livemode": livemode, "currency": currency}
        await record_export(runtime, member, asked | {"month": month.name})
        own = runtime.sessionmaker()
        return csv_file(own, _csv_lines(own, member.merchant_id, livemode, currency, month), name)


for _mode_path, _livemode in (("", True), ("/test", False)):
    _register(_mode_path, _livemode)
