"""Refusals of the pages behind a door; the door's route renders each as a page, and a
missing session as a redirect to its sign-in page."""

from __future__ import annotations

from cauri.kit.errors import CauriError


class SignInRequired(CauriError):
    code, http_status = "sign_in_required", 401
    default_message = "Connectez-vous pour continuer."


class Forbidden(CauriError):
    code, http_status = "forbidden", 403


class CsrfRefused(CauriError):
    code, http_status = "csrf_refused", 403

    def __init__(self, where: str) -> None:
        super().__init__(
            f"Ce formulaire a expiré ou ne vient pas de {where} : rechargez la page et "
            "recommencez. Rien n'a été enregistré."
        )
