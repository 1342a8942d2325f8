"""Finance's queue of differences with the operators (cauri.reconciliation): the open ones,
oldest day first (all with `?tous=1`), each with what the operator's line and Cauri's
operation say; finance resolves one with a reason, in the audit log, as `cauri reconcile
resolve` does. Reading and resolving take the finance permission, `exports`; a resolution
that books a correcting entry takes `balances.credit` too, and a second person above the
platform's dual-approval amount (Approbations)."""

from __future__ import annotations

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.acting import actor, may, permission
from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, InvalidRequest
from cauri.ledger import holdings
from cauri.models import MoneyApproval
from cauri.reconciliation import service, suggestions
from cauri.reconciliation.kinds import LABELS
from cauri.signin.forms import posted
from cauri.staff import actions
from cauri.staff.roles import Permission

PATH = "/discrepancies"

pages = Pages()


async def _queue(
    request: Request, session: AsyncSession, refusal: CauriError | None = None
) -> Response:
    every = request.query_params.get("tous") == "1"
    found = await service.listed(session, service.Filters(open_only=not every), limit=200)
    already = await suggestions.booked(session, found)
    context = {
        "rows": [
            service.summary(discrepancy)
            | {"hint": suggestions.wallet_only(discrepancy, already.get(discrepancy.id, 0))}
            for discrepancy in found
        ],
        "labels": LABELS,
        "every": every,
        "refusal": refusal,
        "resolved": request.query_params.get("resolu"),
        "asked": request.query_params.get("demande"),
        "receivables": await holdings.receivables(session),
    }
    return render(
        request, "console/discrepancies.html", context, refusal.http_status if refusal else 200
    )


@pages.get(PATH, Permission.EXPORT, menu="Écarts opérateurs")
async def queue(request: Request, staff: Staff, session: SessionDep) -> Response:
    return await _queue(request, session)


@pages.post(PATH + "/{discrepancy_id}/resolve", Permission.EXPORT)
async def resolve(
    request: Request,
    staff: Staff,
    session: SessionDep,
    runtime: RuntimeDep,
    discrepancy_id: int,
) -> Response:
    fields = await posted(request)
    reason = fields.get("reason") or ""
    # One part of the correcting entry a line, as `--book` takes them.
    book = [line.strip() for line in (fields.get("book") or "").splitlines() if line.strip()]
    if book and not may(staff, permission(actions.RESOLVE_DISCREPANCY)):
        refused = InvalidRequest.field(
            "book", "Écrire une correction demande le droit de créditer des soldes (finance)."
        )
        return await _queue(request, session, refused)
    done = await attempt(
        session,
        lambda: actions.resolve_discrepancy(
            session, runtime, actor(staff), discrepancy_id, reason, book
        ),
    )
    if isinstance(done, CauriError):
        return await _queue(request, session, done)
    if isinstance(done, MoneyApproval):
        return redirect(f"{PREFIX}{PATH}?demande={discrepancy_id}")
    return redirect(f"{PREFIX}{PATH}?resolu={discrepancy_id}")
