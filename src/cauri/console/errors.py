"""The console's own refusal: a role's (ConsoleRoute renders it, as every other CauriError,
as a French page: cauri.signin.route)."""

from __future__ import annotations

from cauri.signin.errors import Forbidden
from cauri.staff.roles import DESCRIPTIONS_FR, ROLE_NAMES_FR, Permission


def lacking(role: str, permission: Permission) -> Forbidden:
    return Forbidden.lacking(ROLE_NAMES_FR.get(role, role), DESCRIPTIONS_FR[permission])
