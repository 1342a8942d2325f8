"""Issue 14: the roles are a pure map, each role holding what the role below it holds."""

from __future__ import annotations

from cauri.models.people import STAFF_ROLES
from cauri.staff.roles import (
    DESCRIPTIONS_FR,
    PERMISSIONS,
    ROLE_NAMES_FR,
    Permission,
    allows,
    requires_totp,
)


def test_every_role_is_mapped_named_and_every_permission_described() -> None:
    assert set(PERMISSIONS) == set(STAFF_ROLES) == set(ROLE_NAMES_FR)
    assert set(DESCRIPTIONS_FR) == set(Permission)


def test_viewer_reads_only() -> None:
    assert PERMISSIONS["viewer"] == {Permission.READ}


def test_support_looks_up_payments_and_resends_webhooks() -> None:
    assert PERMISSIONS["support"] - PERMISSIONS["viewer"] == {
        Permission.LOOK_UP_PAYMENTS,
        Permission.RESEND_WEBHOOKS,
    }


def test_finance_approves_payouts_credits_balances_and_exports() -> None:
    assert PERMISSIONS["finance"] - PERMISSIONS["support"] == {
        Permission.APPROVE_PAYOUTS,
        Permission.CREDIT_BALANCES,
        Permission.EXPORT,
    }


def test_admin_manages_the_platform() -> None:
    assert PERMISSIONS["admin"] - PERMISSIONS["finance"] == {
        Permission.MANAGE_MERCHANTS,
        Permission.MANAGE_KEYS,
        Permission.MANAGE_FEES,
        Permission.MANAGE_LIMITS,
        Permission.MANAGE_CONNECTORS,
        Permission.MANAGE_ROUTES,
        Permission.MANAGE_STAFF,
    }
    assert PERMISSIONS["admin"] == set(Permission)


def test_unknown_role_is_allowed_nothing() -> None:
    assert not allows("root", Permission.READ)
    assert allows("viewer", Permission.READ)
    assert not allows("support", Permission.APPROVE_PAYOUTS)


def test_admin_and_finance_need_totp() -> None:
    assert {role for role in STAFF_ROLES if requires_totp(role)} == {"admin", "finance"}
