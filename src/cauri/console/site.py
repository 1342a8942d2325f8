"""The console as the app serves it at /console: its groups of pages, in the order of the
menu, its stylesheet, and an HTML 404 for every other address under /console."""

from __future__ import annotations

from fastapi import APIRouter

from cauri.console import (
    approvals,
    audit_log,
    connectors,
    deliveries,
    discrepancies,
    exports,
    ledger,
    merchant_actions,
    merchant_admin,
    merchants,
    overview,
    payout_batches,
    plan_resolution,
    resources,
    settings,
    staff_accounts,
)
from cauri.console.pages import Pages
from cauri.console.rendering import ConsoleRoute, render
from cauri.signin.doors import CONSOLE
from cauri.signin.site import mount

# Each group's menu entries appear in this order; a new group of pages is added here.
GROUPS: tuple[Pages, ...] = (
    overview.pages,
    resources.pages,
    approvals.pages,
    payout_batches.pages,
    deliveries.pages,
    merchants.pages,
    merchant_actions.pages,
    merchant_admin.pages,
    plan_resolution.pages,
    connectors.pages,
    ledger.pages,
    discrepancies.pages,
    exports.pages,
    audit_log.pages,
    settings.pages,
    staff_accounts.pages,
)

# Read by the pages' layout (cauri.console.rendering, which the groups import) from the app.
MENU = tuple(entry for group in GROUPS for entry in group.menu)


def install(parent: APIRouter) -> None:
    mount(
        parent,
        CONSOLE,
        render,
        ConsoleRoute,
        [group.router for group in GROUPS],
        stylesheet_path="/static/console.css",
        missing="Cette page de la console n'existe pas.",
    )
