"""The console's own refusals: a role's; ConsoleRoute renders each (and every other
CauriError) as a French page (cauri.signin.route)."""

from __future__ import annotations

from cauri.signin import errors as signin_errors
from cauri.staff.roles import DESCRIPTIONS_FR, ROLE_NAMES_FR, Permission


class Forbidden(signin_errors.Forbidden):
    @classmethod
    def lacking(cls, role: str, permission: Permission) -> Forbidden:
        role_name = ROLE_NAMES_FR.get(role, role)
        what = DESCRIPTIONS_FR[permission]
        # French elides "de" before a vowel: "d'exporter", "de gérer".
        of = "d'" if what[0] in "aeéèiouy" else "de "
        return cls(f"Votre rôle ({role_name}) ne permet pas {of}{what}.")
