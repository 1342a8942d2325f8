"""Webhook deliveries: the failing endpoints and the deliveries that gave up or are
retrying (cauri.staff.deliveries), one delivery with its attempts, and "Renvoyer": the
merchant's own retry (webhooks.service.retry) for any merchant's delivery, by support staff
and above (`webhooks.resend`), recorded in the audit log."""

from __future__ import annotations

from fastapi import Request, Response

from cauri.console.acting import actor, permission
from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError
from cauri.signin.forms import Form, pager
from cauri.staff import actions, deliveries
from cauri.staff.roles import Permission, allows
from cauri.webhooks.failing import FAILING_WINDOW

PATH = "/deliveries"
PER_PAGE = 25

pages = Pages()


@pages.get(PATH, Permission.READ, menu="Webhooks")
async def failing(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    form = Form.read(request, ("merchant", "page"))
    page = form.page(PER_PAGE)
    now = runtime.clock.now()
    found, total = await deliveries.failing(session, now, page, form.optional("merchant"))
    context = {
        "form": form,
        "endpoints": await deliveries.failing_endpoints(session, now),
        "rows": found,
        "pager": pager(request, page, total),
        "hours": int(FAILING_WINDOW.total_seconds() // 3600),
    }
    return render(request, "console/deliveries.html", context, 422 if form.errors else 200)


async def _delivery_page(
    request: Request,
    staff: Staff,
    session: SessionDep,
    delivery_id: str,
    refusal: CauriError | None = None,
) -> Response:
    context = {
        "delivered": await deliveries.delivery(session, delivery_id),
        "may_resend": allows(staff.role, Permission.RESEND_WEBHOOKS),
        "resent": request.query_params.get("renvoyee") == "1",
        "refusal": refusal,
    }
    status = refusal.http_status if refusal else 200
    return render(request, "console/delivery.html", context, status)


@pages.get(PATH + "/{delivery_id}", Permission.READ)
async def delivery(
    request: Request, staff: Staff, session: SessionDep, delivery_id: str
) -> Response:
    return await _delivery_page(request, staff, session, delivery_id)


@pages.post(PATH + "/{delivery_id}/resend", permission(actions.RESEND_WEBHOOK))
async def resend(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, delivery_id: str
) -> Response:
    done = await attempt(
        session,
        lambda: actions.resend_webhook_delivery(session, runtime, actor(staff), delivery_id),
    )
    if isinstance(done, CauriError):
        return await _delivery_page(request, staff, session, delivery_id, done)
    return redirect(f"{PREFIX}{PATH}/{done.id}?renvoyee=1")
