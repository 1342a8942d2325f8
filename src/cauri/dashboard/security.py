"""The dashboard's front door: merchants' teams' pages at /dashboard, with their own cookies."""

from __future__ import annotations

from cauri.people.realm import MERCHANT
from cauri.signin.door import Door

DASHBOARD = Door(
    MERCHANT,
    "/dashboard",
    "dashboard",
    layout="dashboard/layout.html",
    where="l'espace marchand",
)
PREFIX = DASHBOARD.prefix
