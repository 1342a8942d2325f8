"""The audit log (cauri.audit): every action of the staff and of the CLI, newest first,
searched by actor, action, resource and period, each entry with its state before and after
field by field; and the same search as a CSV file (`cauri audit export`), streamed.

Reading it is reading the console (`read`: it holds no secret, cauri.audit.log redacts
them); taking it away as a file is an export (`exports`: finance and administrators)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Response
from fastapi.responses import StreamingResponse

from cauri.audit.export import csv_lines
from cauri.audit.log import AuditFilter, search
from cauri.console.acting import actor
from cauri.console.auth import SignedIn, Staff
from cauri.console.pages import Pages
from cauri.console.rendering import closing_after, render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import unit_of_work
from cauri.models import AuditEntry
from cauri.signin.forms import Form, Pager, pager
from cauri.staff import actions
from cauri.staff.actions import ACTIONS
from cauri.staff.roles import Permission, allows

PATH = "/audit"
PER_PAGE = 25
FIELDS = ("actor", "action", "resource_type", "resource_id", "from", "to", "page")

pages = Pages()


@dataclass(frozen=True)
class Change:
    """One field of an entry: its value before and after, as JSON text (None: absent)."""

    name: str
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after


def _shown(values: Mapping[str, Any] | None, name: str) -> str | None:
    if values is None or name not in values:
        return None
    return json.dumps(values[name], ensure_ascii=False, sort_keys=True)


def changes(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[Change]:
    """Every field either state has, in the order they were recorded."""
    names = dict.fromkeys([*(before or {}), *(after or {})])
    return [Change(name, _shown(before, name), _shown(after, name)) for name in names]


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
    entries = [(entry, changes(entry.before, entry.after)) for entry in found]
    return _page(request, staff, form, entries, pager(request, page, total))


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
    return StreamingResponse(
        closing_after(session, csv_lines(session, wanted)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="cauri-audit.csv"'},
    )
