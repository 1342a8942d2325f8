"""The payout approval queue: the payouts held for approval, oldest first, with their
approvals so far; finance staff approve (a reason optional) or reject (a reason required)
through the staff's actions, as `cauri payouts approve|reject` does. Maker-checker and
"nobody approves twice" are the payouts service's rules: their refusals (409) are shown on
the queue, nothing written.

After an action the browser is sent back to the queue with the payout's reference; the
message there is the payout's state read again (approved and sent, 1 approbation sur 2,
rejected), not words carried by the address.

Below the payouts, the other live money actions above the same amount that wait for a second
person (credits, failed plans' resolutions, a raise or an unset of the amount;
cauri.staff.approvals), under the same rules: whoever decides one needs the permission of
the action itself (an admin's for the amount)."""

from __future__ import annotations

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.acting import actor, may, permission
from cauri.console.auth import SignedIn, Staff
from cauri.console.errors import lacking
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render, templates
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, InvalidRequest
from cauri.runtime import Runtime
from cauri.signin.forms import Form, pager, posted
from cauri.staff import actions, approval_queue, approvals
from cauri.staff.roles import Permission, allows

PATH = "/approvals"
PER_PAGE = 25
REASON_REQUIRED = "Indiquez le motif du rejet : il est gardé dans le journal d'audit."

pages = Pages()


async def _queue(
    request: Request,
    staff: SignedIn,
    session: AsyncSession,
    refusal: CauriError | None = None,
) -> Response:
    form = Form.read(request, ("page", "transfert"))
    page = form.page(PER_PAGE)
    rows, total = await approval_queue.held(session, page)
    reference = form.optional("transfert")
    context = {
        "rows": rows,
        "pager": pager(request, page, total),
        "form": form,
        "done": None if reference is None else await approval_queue.one(session, reference),
        "refusal": refusal,
        "may_approve": allows(staff.role, Permission.APPROVE_PAYOUTS),
        "me": actor(staff).key,
        "actions": await approvals.waiting(session),
        "acted": request.query_params.get("operation"),
    }
    status = refusal.http_status if refusal else 422 if form.errors else 200
    return render(request, "console/approvals.html", context, status)


@pages.get(PATH, Permission.READ, menu="Approbations")
async def queue(request: Request, staff: Staff, session: SessionDep) -> Response:
    return await _queue(request, staff, session)


def _back_to_queue(reference: str) -> Response:
    return redirect(f"{PREFIX}{PATH}?transfert={reference}")


@pages.post(PATH + "/{reference}/approve", permission(actions.APPROVE_PAYOUT))
async def approve(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, reference: str
) -> Response:
    reason = (await posted(request)).get("reason") or None
    done = await attempt(
        session,
        lambda: actions.approve_payout(session, runtime, actor(staff), reference, reason),
    )
    if isinstance(done, CauriError):
        return await _queue(request, staff, session, done)
    return _back_to_queue(reference)


@pages.post(PATH + "/{reference}/reject", permission(actions.REJECT_PAYOUT))
async def reject(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, reference: str
) -> Response:
    reason = (await posted(request)).get("reason")
    if not reason:
        return await _queue(request, staff, session, InvalidRequest(REASON_REQUIRED))
    done = await attempt(
        session,
        lambda: actions.reject_payout(session, runtime, actor(staff), reference, reason),
    )
    if isinstance(done, CauriError):
        return await _queue(request, staff, session, done)
    return _back_to_queue(reference)


# What each held action is, in the words of the page.
KINDS_FR = {
    actions.CREDIT_BALANCE.name: "Crédit du solde",
    actions.REFUND_PLAN.name: "Séquestre d'un plan remboursé à un numéro",
    actions.RELEASE_PLAN.name: "Séquestre d'un plan libéré au marchand",
    actions.SET_SETTINGS.name: "Montant de double approbation relevé ou retiré",
    actions.CREATE_PAYOUT_BATCH.name: "Lot de transferts vers des tiers",
}
templates.env.globals["money_action_kinds"] = KINDS_FR


async def _decide_action(
    request: Request,
    staff: SignedIn,
    session: AsyncSession,
    runtime: Runtime,
    approval_id: str,
    *,
    approve: bool,
) -> Response:
    reason = (await posted(request)).get("reason") or None
    if not approve and reason is None:
        return await _queue(request, staff, session, InvalidRequest(REASON_REQUIRED))
    kind = await approvals.kind_of(session, approval_id)
    needed = actions.APPROVABLE.get(kind or "")
    if needed is not None and not may(staff, needed.permission):
        raise lacking(staff.role, Permission(needed.permission))
    decide = actions.approve_action if approve else actions.reject_action
    done = await attempt(
        session, lambda: decide(session, runtime, actor(staff), approval_id, reason)
    )
    if isinstance(done, CauriError):
        return await _queue(request, staff, session, done)
    return redirect(f"{PREFIX}{PATH}?operation={done.status}")


@pages.post(PATH + "/operations/{approval_id}/approve", permission(actions.APPROVE_ACTION))
async def approve_action(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, approval_id: str
) -> Response:
    return await _decide_action(request, staff, session, runtime, approval_id, approve=True)


@pages.post(PATH + "/operations/{approval_id}/reject", permission(actions.REJECT_ACTION))
async def reject_action(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, approval_id: str
) -> Response:
    return await _decide_action(request, staff, session, runtime, approval_id, approve=False)
