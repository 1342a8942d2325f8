"""The one error family of the service; `cauri.app` renders each as the spec's envelope."""

from __future__ import annotations

from typing import Any, ClassVar


class CauriError(Exception):
    code: ClassVar[str] = "server_error"
    http_status: ClassVar[int] = 500
    default_message: ClassVar[str] = "Une erreur interne est survenue."
    # Some refusals are facts to keep: a payment the operator refused is recorded as failed
    # (spec: payment_failed). Such errors commit the request's writes instead of rolling back.
    keeps_writes: ClassVar[bool] = False

    def __init__(
        self,
        message: str | None = None,
        details: dict[str, list[str]] | None = None,
        headers: dict[str, str] | None = None,
        *,
        reference: str | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.details = details
        self.headers = headers or {}
        # The resource a refusal kept (a payment or payout recorded failed): a merchant who
        # sent no external_id finds it by this.
        self.reference = reference
        super().__init__(self.message)

    def envelope(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            error["details"] = self.details
        if self.reference is not None:
            error["reference"] = self.reference
        return {"success": False, "error": error}


class Unauthorized(CauriError):
    code, http_status = "unauthorized", 401
    default_message = "Clé d'API absente ou invalide."


class KeyExpired(CauriError):
    code, http_status = "key_expired", 401
    default_message = "Cette clé d'API a expiré."


class MerchantInactive(CauriError):
    code, http_status = "merchant_inactive", 403
    default_message = "Le compte marchand n'est pas actif."


class InvalidRequest(CauriError):
    code, http_status = "invalid_request", 422
    default_message = "La requête est invalide."

    @classmethod
    def field(cls, field: str, message: str) -> InvalidRequest:
        return cls(message, {field: [message]})


class PaymentFailed(CauriError):
    code, http_status = "payment_failed", 402
    default_message = "L'opérateur a refusé le paiement."
    keeps_writes = True


class InsufficientFunds(CauriError):
    code, http_status = "insufficient_funds", 402
    default_message = "Le solde ne couvre pas l'opération, frais compris."


class PayoutFailed(CauriError):
    code, http_status = "payout_failed", 402
    default_message = "L'opérateur a refusé le transfert."
    keeps_writes = True


class RefundFailed(CauriError):
    code, http_status = "refund_failed", 402
    default_message = "L'opérateur a refusé le remboursement ; rien n'a été débité."
    keeps_writes = True


class PayoutLimitExceeded(CauriError):
    code, http_status = "payout_limit_exceeded", 403
    default_message = "Le plafond de transferts vers des tiers est atteint."


class NotFound(CauriError):
    code, http_status = "not_found", 404
    default_message = "Ressource introuvable."


class Conflict(CauriError):
    code, http_status = "conflict", 409
    default_message = "L'état actuel de la ressource ne permet pas cette opération."


class PlanExpired(Conflict):
    """A plan found past its expires_at refuses the operation (409 conflict) and expires in
    that request: the expiry is a fact to keep, whatever the answer."""

    default_message = "Ce plan a expiré : il n'accepte plus ni versement ni annulation."
    keeps_writes = True


class MethodNotAllowed(CauriError):
    code, http_status = "method_not_allowed", 405
    default_message = "Méthode HTTP non autorisée sur cette route."


class RateLimited(CauriError):
    code, http_status = "rate_limited", 429
    default_message = "Trop de requêtes : réessayez plus tard."


class PayloadTooLarge(CauriError):
    code, http_status = "payload_too_large", 413
    default_message = "Le corps de la requête dépasse la taille admise."


class ServerError(CauriError):
    pass
