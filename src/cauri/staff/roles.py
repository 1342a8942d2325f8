"""What each staff role may do: a pure map from role to permissions. Every console page and
every staff action names the one permission it needs; nothing else decides.

Each role has what the role below it has: viewer reads; support also looks up payments and
resends webhooks; finance also approves or rejects payouts, credits balances and exports;
admin also manages merchants, keys, fees, limits, connectors, routes and staff.
"""

from __future__ import annotations

from enum import StrEnum


class Permission(StrEnum):
    READ = "read"
    LOOK_UP_PAYMENTS = "payments.look_up"
    RESEND_WEBHOOKS = "webhooks.resend"
    APPROVE_PAYOUTS = "payouts.approve"
    CREDIT_BALANCES = "balances.credit"
    EXPORT = "exports"
    MANAGE_MERCHANTS = "merchants.manage"
    MANAGE_KEYS = "keys.manage"
    MANAGE_FEES = "fees.manage"
    MANAGE_LIMITS = "limits.manage"
    MANAGE_CONNECTORS = "connectors.manage"
    MANAGE_ROUTES = "routes.manage"
    MANAGE_STAFF = "staff.manage"


# What a refusal tells the person: "Votre rôle ne permet pas de <this>" (d' before a vowel).
DESCRIPTIONS_FR: dict[Permission, str] = {
    Permission.READ: "consulter la console",
    Permission.LOOK_UP_PAYMENTS: "rechercher des paiements",
    Permission.RESEND_WEBHOOKS: "renvoyer des webhooks",
    Permission.APPROVE_PAYOUTS: "approuver ou rejeter des transferts",
    Permission.CREDIT_BALANCES: "créditer des soldes",
    Permission.EXPORT: "exporter des données et lancer la vérification du grand livre",
    Permission.MANAGE_MERCHANTS: "gérer les marchands",
    Permission.MANAGE_KEYS: "gérer les clés d'API",
    Permission.MANAGE_FEES: "modifier les frais",
    Permission.MANAGE_LIMITS: "modifier les plafonds",
    Permission.MANAGE_CONNECTORS: "gérer les connecteurs",
    Permission.MANAGE_ROUTES: "modifier les routes",
    Permission.MANAGE_STAFF: "gérer le personnel",
}

ROLE_NAMES_FR = {
    "admin": "administrateur",
    "finance": "finance",
    "support": "support",
    "viewer": "lecture seule",
}

_VIEWER = frozenset({Permission.READ})
_SUPPORT = _VIEWER | {Permission.LOOK_UP_PAYMENTS, Permission.RESEND_WEBHOOKS}
_FINANCE = _SUPPORT | {Permission.APPROVE_PAYOUTS, Permission.CREDIT_BALANCES, Permission.EXPORT}
_ADMIN = frozenset(Permission)

PERMISSIONS: dict[str, frozenset[Permission]] = {
    "viewer": _VIEWER,
    "support": _SUPPORT,
    "finance": _FINANCE,
    "admin": _ADMIN,
}

# Roles that move money or change the platform sign in with a second factor.
TOTP_REQUIRED = frozenset({"admin", "finance"})


def allows(role: str, permission: Permission) -> bool:
    return permission in PERMISSIONS.get(role, frozenset())


def requires_totp(role: str) -> bool:
    return role in TOTP_REQUIRED
