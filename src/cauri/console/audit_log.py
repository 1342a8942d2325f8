"""The audit log (cauri.audit): every action of the staff and of the CLI, newest first,
searched by actor, action, resource and period, each entry with its state before and after
field by field; and the same search as a CSV file (`cauri audit export`), streamed.

Reading it is reading the console (`read`: it holds no secret, cauri.audit.log redacts
them); taking it away as a file is an export (`exports`: finance and administrators)."""

from __future__ import annotations

from fastapi import Request, Response

from cauri.audit.export import csv_lines
from cauri.audit.log import AuditFilter, search
from cauri.console.acting import actor
from cauri.console.auth import SignedIn, Staff
from cauri.console.pages import Pages
from cauri.console.rendering import render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import unit_of_work
from cauri.models import AuditEntry
from cauri.signin.audit_entries import Change, shown
from cauri.signin.downloads import csv_file
from cauri.signin.forms import Form, Pager, pager
from cauri.staff import actions
from cauri.staff.actions import ACTIONS
from cauri.staff.roles import Permission, allows

PATH = "/audit"
PER_PAGE = 25
FIELDS = ("actor", "action", "resource_type", "resource_id", "from", "to", "page")

pages = Pages()


def _wanted(form: Form) -> AuditFilter:
    return AuditFilter(
        actor=form.optional("actor"),
        action=form.optional("action"),
        resource_type=form.optional("resource_type"),
        resource_id=form.optional("resource_id"),
        period=form.period(),
    )


def _page(
    request: Request,
    staff: SignedIn,
    form: Form,
    entries: list[tuple[AuditEntry, list[Change]]],
    pages_of: Pager | None,
) -> Response:
    context = {
        "form": form,
        "entries": entries,
        "pager": pages_of,
        "actions": sorted({action.name for action in ACTIONS}),
        "may_export": allows(staff.role, Permission.EXPORT),
        "query": request.url.query,
    }
    return render(request, "console/audit.html", context, 422 if form.errors else 200)


@pages.get(PATH, Permission.READ, menu="Journal d'audit")
async def audit_log(request: Request, staff: Staff, session: SessionDep) -> Response:
    form = Form.read(request, FIELDS)
    wanted = _wanted(form)
    page = form.page(PER_PAGE)
    if form.errors:
        return _page(request, staff, form, [], None)
    found, total = await search(session, wanted, page)
    return _page(request, staff, form, shown(found), pager(request, page, total))


@pages.get(PATH + "/export", Permission.EXPORT)
async def export(request: Request, staff: Staff, runtime: RuntimeDep) -> Response:
    """The search's every entry, oldest first, in a session of its own that stays open while
    the file streams (the request's has ended by then)."""
    form = Form.read(request, FIELDS)
    wanted = _wanted(form)
    if form.errors:
        return _page(request, staff, form, [], None)
    async with unit_of_work(runtime.sessionmaker) as recording:
        await actions.record_export(
            recording, runtime, actor(staff), actions.EXPORT_AUDIT, "audit_log", wanted
        )
    session = runtime.sessionmaker()
    return csv_file(session, csv_lines(session, wanted), "cauri-audit")
