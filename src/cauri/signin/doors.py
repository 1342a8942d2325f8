"""The two front doors: the staff's console at /console and the merchants' dashboard at
/dashboard, each with its own cookies. Both are named here, below the pages behind them, so
that one door's pages may point to the other's (the console hands a merchant's owner a link
to the dashboard)."""

from __future__ import annotations

from cauri.people.realm import MERCHANT, STAFF
from cauri.signin.door import Door

CONSOLE = Door(STAFF, "/console", "console", layout="console/layout.html", where="la console")
DASHBOARD = Door(
    MERCHANT,
    "/dashboard",
    "dashboard",
    layout="dashboard/layout.html",
    where="l'espace marchand",
)
