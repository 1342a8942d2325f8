"""What each role of a merchant's team may do: a pure map from role to permissions. Every
dashboard page and action names the one permission it needs; nothing else decides.

owner: everything (the team, live keys); developer: test keys, webhooks (of both
environments: an endpoint holds no money), test mode;
finance: payouts, refunds, statements and their files; viewer: reads.
"""

from __future__ import annotations

from enum import StrEnum


class Permission(StrEnum):
    READ = "read"
    MOVE_MONEY = "money.move"
    STATEMENTS = "statements.read"
    DEVELOP = "developers.manage"
    LIVE_KEYS = "keys.live"
    MANAGE_TEAM = "team.manage"


DESCRIPTIONS_FR: dict[Permission, str] = {
    Permission.READ: "consulter le tableau de bord",
    Permission.MOVE_MONEY: "rembourser ou transférer",
    Permission.STATEMENTS: "consulter les relevés et exporter les données",
    Permission.DEVELOP: "gérer les clés d'API de test et les webhooks",
    Permission.LIVE_KEYS: "gérer les clés d'API live",
    Permission.MANAGE_TEAM: "gérer l'équipe",
}

ROLE_NAMES_FR = {
    "owner": "propriétaire",
    "developer": "développeur",
    "finance": "finance",
    "viewer": "lecture seule",
}

PERMISSIONS: dict[str, frozenset[Permission]] = {
    "viewer": frozenset({Permission.READ}),
    "developer": frozenset({Permission.READ, Permission.DEVELOP}),
    "finance": frozenset({Permission.READ, Permission.MOVE_MONEY, Permission.STATEMENTS}),
    "owner": frozenset(Permission),
}


def allows(role: str, permission: Permission) -> bool:
    return permission in PERMISSIONS.get(role, frozenset())
