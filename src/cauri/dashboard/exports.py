"""The team's CSV files of its payments, payouts and refunds created in a period, in one
environment (owners and finance): the staff's export (cauri.staff.exports), narrowed to the
merchant, streamed as it is read, so that a year of a busy account never sits in memory.
Each download is audited."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.dashboard.acting import record_export
from cauri.dashboard.auth import SignedIn, require
from cauri.dashboard.rendering import DashboardRoute, render
from cauri.http import RuntimeDep
from cauri.signin.downloads import csv_file
from cauri.signin.forms import Form
from cauri.staff import exports
from cauri.staff.exports import ExportFilter
from cauri.team.roles import Permission

FIELDS = ("from", "to")
KINDS: dict[str, Callable[[AsyncSession, ExportFilter], AsyncIterator[str]]] = {
    "payments": exports.payments,
    "payouts": exports.payouts,
    "refunds": exports.refunds,
}

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Finance = Annotated[SignedIn, Depends(require(Permission.STATEMENTS))]


def _register(kind: str, mode_path: str, livemode: bool) -> None:
    @router.get(f"{mode_path}/{kind}/csv")
    async def download(request: Request, member: Finance, runtime: RuntimeDep) -> Response:
        form = Form.read(request, FIELDS)
        wanted = ExportFilter(form.period(), member.merchant_id, livemode)
        if form.errors:
            context = {"form": form, "livemode": livemode}
            return render(request, "dashboard/export_refused.html", context, 422)
        await record_export(runtime, member, {"kind": kind, "livemode": livemode, **form.values})
        environment = "live" if livemode else "test"
        name = "-".join(part for part in (kind, environment, *form.values.values()) if part)
        own = runtime.sessionmaker()
        return csv_file(own, KINDS[kind](own, wanted), name)


for _mode_path, _livemode in (("", True), ("/test", False)):
    for _kind in KINDS:
        _register(_kind, _mode_path, _livemode)
