"""Refusals of the pages behind a door; the door's route renders each as a page, and a
missing session as a redirect to its sign-in page."""

from __future__ import annotations

from cauri.kit.errors import CauriError


class SignInRequired(CauriError):
    code, http_status = "sign_in_required", 401
    default_message = "Connectez-vous pour continuer."


class Forbidden(CauriError):
    code, http_status = "forbidden", 403

    @classmethod
    def lacking(cls, role_name: str, what: str) -> Forbidden:
        """ "Votre rôle (<role_name>) ne permet pas de <what>"."""
        # French elides "de" before a vowel: "d'exporter", "de gérer".
        of = "d'" if what[0] in "aeéèiouy" else "de "
        return cls(f"Votre rôle ({role_name}) ne permet pas {of}{what}.")


class CsrfRefused(CauriError):
    code, http_status = "csrf_refused", 403

    def __init__(self, where: str) -> None:
        super().__init__(
            f"Ce formulaire a expiré ou ne vient pas de {where} : rechargez la page et "
            "recommencez. Rien n'a été enregistré."
        )
