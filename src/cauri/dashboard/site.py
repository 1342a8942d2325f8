"""The dashboard as the app serves it at /dashboard (cauri.signin.site): its homes, its
pages of payments, plans, payouts and refunds, in each environment."""

from __future__ import annotations

from fastapi import APIRouter

from cauri.dashboard import (
    developers,
    exports,
    home,
    links,
    payout_batches,
    payouts,
    resources,
    settings,
    statements,
    team,
    team_log,
)
from cauri.dashboard.rendering import DashboardRoute, render
from cauri.signin.doors import DASHBOARD
from cauri.signin.site import mount


def install(parent: APIRouter) -> None:
    mount(
        parent,
        DASHBOARD,
        render,
        DashboardRoute,
        # Before resources: `/payouts/new`, `/payments/csv` are no references.
        [
            home.router,
            payouts.router,
            payout_batches.router,
            exports.router,
            resources.router,
            developers.router,
            team.router,
            team_log.router,
            statements.router,
            links.router,
            settings.router,
        ],
        stylesheet_path="/static/dashboard.css",
        missing="Cette page du tableau de bord n'existe pas.",
    )
