"""The console's own refusals; ConsoleRoute renders each (and every other CauriError) as a
French page, and a missing session as a redirect to the sign-in page."""

from __future__ import annotations

from cauri.kit.errors import CauriError
from cauri.staff.roles import DESCRIPTIONS_FR, ROLE_NAMES_FR, Permission


class SignInRequired(CauriError):
    code, http_status = "sign_in_required", 401
    default_message = "Connectez-vous pour continuer."


class Forbidden(CauriError):
    code, http_status = "forbidden", 403

    @classmethod
    def lacking(cls, role: str, permission: Permission) -> Forbidden:
        role_name = ROLE_NAMES_FR.get(role, role)
        what = DESCRIPTIONS_FR[permission]
        # French elides "de" before a vowel: "d'exporter", "de gérer".
        of = "d'" if what[0] in "aeéèiouy" else "de "
        return cls(f"Votre rôle ({role_name}) ne permet pas {of}{what}.")


class CsrfRefused(CauriError):
    code, http_status = "csrf_refused", 403
    default_message = (
        "Ce formulaire a expiré ou ne vient pas de la console : rechargez la page et "
        "recommencez. Rien n'a été enregistré."
    )
