"""CSV exports of payments, payouts or refunds for a period, optionally one merchant's and
one environment's (cauri.staff.exports, as `cauri export`): a form, then the file streamed
as a download while it is read. Finance and administrators only (`exports`); each
download is in the audit log (who, which rows) from the moment it starts.

The file is read in its own session, open while it streams (the request's unit of work has
ended when the body is sent); its first line is read before the answer starts, so that a
refused period or an unknown merchant is the form again with its message, not a broken
download."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.acting import actor
from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import render
from cauri.http import RuntimeDep
from cauri.kit.db import unit_of_work
from cauri.kit.errors import InvalidRequest, NotFound
from cauri.signin.downloads import csv_file
from cauri.signin.forms import Form
from cauri.staff import actions, exports
from cauri.staff.exports import ExportFilter
from cauri.staff.roles import Permission

pages = Pages()

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
FIELDS = ("kind", "from", "to", "merchant", "mode")
KINDS: dict[str, tuple[str, Callable[[AsyncSession, ExportFilter], AsyncIterator[str]]]] = {
    "payments": ("Paiements", exports.payments),
    "payouts": ("Transferts", exports.payouts),
    "refunds": ("Remboursements", exports.refunds),
}


def _form_page(request: Request, form: Form, status_code: int = 200) -> Response:
    kinds = [(name, label) for name, (label, _) in KINDS.items()]
    return render(request, "console/exports.html", {"form": form, "kinds": kinds}, status_code)


@pages.get("/exports", Permission.EXPORT, menu="Exports")
async def export_form(request: Request, staff: Staff) -> Response:
    return _form_page(request, Form.read(request, FIELDS))


@pages.get("/exports/download", Permission.EXPORT)
async def download(request: Request, staff: Staff, runtime: RuntimeDep) -> Response:
    form = Form.read(request, FIELDS)
    kind = KINDS.get(form.values["kind"])
    if kind is None:
        form.errors["kind"] = (
            "Choisissez ce qu'il faut exporter : paiements, transferts ou remboursements."
        )
    period = form.period()
    livemode = form.livemode()
    if form.errors:
        return _form_page(request, form, 422)
    assert kind is not None
    wanted = ExportFilter(period, form.optional("merchant"), livemode)
    session = runtime.sessionmaker()
    lines = kind[1](session, wanted)
    try:
        first = await anext(lines)
        async with unit_of_work(runtime.sessionmaker) as recording:
            await actions.record_export(
                recording, runtime, actor(staff), actions.EXPORT_DATA, form.values["kind"], wanted
            )
    except (InvalidRequest, NotFound) as refused:
        await session.close()
        if isinstance(refused, NotFound):
            form.errors["merchant"] = refused.message
        else:
            form.refuse(refused)
        return _form_page(request, form, 422)
    except BaseException:
        await session.close()
        raise
    parts = ("cauri", *(form.values[name] for name in FIELDS))
    # Only what a file name and the header hold as they are (a timestamp's `:` and `+` not).
    name = _UNSAFE.sub("_", "-".join(part for part in parts if part))
    return csv_file(session, lines, name, first)
