"""The team's audit log (owners): what its members did on the dashboard, who, when, each
field before and after; searched by action and period, and exported as CSV (the export is
itself audited). Only the entries of this merchant's members: never the staff's, never
another team's."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.export import csv_lines
from cauri.audit.log import AuditFilter, search
from cauri.dashboard.acting import record_export
from cauri.dashboard.auth import SignedIn, require
from cauri.dashboard.rendering import DashboardRoute, render
from cauri.http import RuntimeDep, SessionDep
from cauri.signin.audit_entries import shown
from cauri.signin.downloads import csv_file
from cauri.signin.forms import Form, pager
from cauri.team.roles import Permission

PATH = "/team/log"
PER_PAGE = 25
FIELDS = ("action", "from", "to", "page")

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Owner = Annotated[SignedIn, Depends(require(Permission.MANAGE_TEAM))]


def _wanted(form: Form, member: SignedIn) -> AuditFilter:
    return AuditFilter(
        action=form.optional("action"), period=form.period(), team_of=member.merchant_id
    )


async def _page(request: Request, member: SignedIn, session: AsyncSession) -> Response:
    form = Form.read(request, FIELDS)
    wanted = _wanted(form, member)
    page = form.page(PER_PAGE)
    context = {"form": form, "entries": [], "pager": None, "query": request.url.query}
    if not form.errors:
        found, total = await search(session, wanted, page)
        context |= {"entries": shown(found), "pager": pager(request, page, total)}
    return render(request, "dashboard/team_log.html", context, 422 if form.errors else 200)


@router.get(PATH)
async def team_log(request: Request, member: Owner, session: SessionDep) -> Response:
    return await _page(request, member, session)


@router.get(PATH + "/csv")
async def export(
    request: Request, member: Owner, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """Every matching entry, oldest first, streamed from a session of its own."""
    form = Form.read(request, FIELDS)
    wanted = _wanted(form, member)
    if form.errors:
        return await _page(request, member, session)
    await record_export(runtime, member, {"kind": "team_log", **form.values})
    own = runtime.sessionmaker()
    return csv_file(own, csv_lines(own, wanted), "journal-equipe")
