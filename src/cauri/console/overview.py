"""The console's home: today's traffic and what needs someone (cauri.staff.overview), and who
is signed in with what their role opens."""

from __future__ import annotations

from fastapi import Request, Response

from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import render
from cauri.http import RuntimeDep, SessionDep
from cauri.staff import overview as staff_overview
from cauri.staff.roles import DESCRIPTIONS_FR, Permission, allows

pages = Pages()

# The console page of an operation's subject, by its kind (a plan refund's reference is not
# its plan's: it is shown without a link).
SUBJECT_PAGES = {"payment": "payments", "payout": "payouts", "refund": "refunds"}


@pages.get("/", Permission.READ, menu="Vue d'ensemble")
async def overview(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    allowed = [
        DESCRIPTIONS_FR[permission] for permission in Permission if allows(staff.role, permission)
    ]
    context = {
        "allowed": allowed,
        "seen": await staff_overview.overview(session, runtime),
        "stuck_hours": int(staff_overview.STUCK_AFTER.total_seconds() // 3600),
        "subject_pages": SUBJECT_PAGES,
    }
    return render(request, "console/overview.html", context)
