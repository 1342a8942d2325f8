"""A failed plan's resolution from its page (finance, balances.credit), as `cauri plans
resolve` does it: what its escrow holds refunded to a Mobile Money number, or released to
the merchant's balance, each with its reason in the audit log (cauri.staff.actions). The
page shows the two forms while the plan can be resolved; the service decides whether it
can (a refusal is the page again with its message, nothing written)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.acting import actor, permission
from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render, templates
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError
from cauri.models import MoneyApproval
from cauri.signin.forms import posted
from cauri.staff import actions
from cauri.staff.kinds import KINDS

PLANS = next(kind for kind in KINDS if kind.path == "/plans")
PATH = PLANS.path + "/{reference}"
# What the page says after each form, by the name its address carries.
DONE = {
    "rembourse": "Remboursement demandé : le plan est remboursé dès que l'opérateur le confirme.",
    "libere": "Séquestre libéré au marchand : son solde disponible est crédité.",
    "demande": "Résolution demandée : au-delà du montant de double approbation, une deuxième "
    "personne doit l'approuver (Approbations).",
}

pages = Pages()
# The plan's page (cauri.console.resources) says what was done.
templates.env.globals["plan_resolution_done"] = DONE


async def _resolve(
    request: Request,
    session: AsyncSession,
    reference: str,
    change: Callable[[], Awaitable[Any]],
    done: str,
) -> Response:
    refusal = await attempt(session, change)
    if isinstance(refusal, MoneyApproval):
        return redirect(f"{PREFIX}{PLANS.path}/{reference}?fait=demande")
    if not isinstance(refusal, CauriError):
        return redirect(f"{PREFIX}{PLANS.path}/{reference}?fait={done}")
    detail = await PLANS.detail(session, reference)
    context = {"kind": PLANS, "detail": detail, "refusal": refusal}
    return render(request, f"console/{PLANS.name}.html", context, refusal.http_status)


@pages.post(PATH + "/refund-to", permission(actions.REFUND_PLAN))
async def refund_to(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, reference: str
) -> Response:
    fields = await posted(request)
    return await _resolve(
        request,
        session,
        reference,
        lambda: actions.refund_plan_to(
            session,
            runtime,
            actor(staff),
            reference,
            phone_number=fields.get("phone_number", ""),
            operator=fields.get("operator", ""),
            reason=fields.get("reason") or None,
        ),
        "rembourse",
    )


@pages.post(PATH + "/release", permission(actions.RELEASE_PLAN))
async def release(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, reference: str
) -> Response:
    reason = (await posted(request)).get("reason", "")
    return await _resolve(
        request,
        session,
        reference,
        lambda: actions.release_plan_to_merchant(
            session, runtime, actor(staff), reference, reason=reason
        ),
        "libere",
    )
