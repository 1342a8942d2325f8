"""The ledger: every account's balance, the reconciliation check's last result with its
date, and a button that runs the check again (cauri.staff.reconciliation, as
`cauri ledger check`). Running it reads every posting: it takes the finance team's
permission, `exports`, not a viewer's; each run is in the audit log with who ran it."""

from __future__ import annotations

from fastapi import Request, Response

from cauri.console.acting import actor, permission
from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.ledger.reconciliation import NEGATIVE, STALE_HEAD, UNBALANCED
from cauri.staff import actions, reconciliation
from cauri.staff.roles import Permission, allows

pages = Pages()

RUN_PERMISSION = permission(actions.RECONCILE)

KINDS_FR = {
    "available": "disponible",
    "escrow": "séquestre des plans",
    "fees": "frais",
    "plan_fees": "frais des plans",
    "penalties": "pénalités",
    "topups": "source des crédits",
    "clearing": "compensation opérateur",
    "wallet": "portefeuille chez l'opérateur",
    "bank": "banque de la plateforme",
    "operator_costs": "frais des opérateurs",
    "suspense": "en attente d'affectation",
    "receivable": "dû par le marchand",
}
CHECKS_FR = {
    UNBALANCED: "Transactions dont les écritures ne s'annulent pas",
    STALE_HEAD: "Comptes dont le solde enregistré diffère de leurs écritures",
    NEGATIVE: "Comptes internes en négatif",
}


@pages.get("/ledger", Permission.READ, menu="Grand livre")
async def ledger(request: Request, staff: Staff, session: SessionDep) -> Response:
    context = {
        "balances": await reconciliation.balances(session),
        "latest": await reconciliation.latest(session),
        "kinds": KINDS_FR,
        "checks": CHECKS_FR,
        "may_run": allows(staff.role, RUN_PERMISSION),
    }
    return render(request, "console/ledger.html", context)


@pages.post("/ledger/check", RUN_PERMISSION)
async def run_check(staff: Staff, session: SessionDep, runtime: RuntimeDep) -> Response:
    """The result is recorded; the ledger page shows it as the last one."""
    await actions.reconcile(session, runtime, actor(staff))
    return redirect(f"{PREFIX}/ledger#reconciliation")
