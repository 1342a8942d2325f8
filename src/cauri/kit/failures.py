"""Why a payment, payout or refund failed, as merchants read it: `failure_code` (the reason
the service recorded, a snake_case code that programs branch on) and `failure_message` (a
French sentence for people, from the one table below).

Reasons come from the service itself or from operators, whose own codes the connectors
and the simulator already turn into snake_case. A reason with a detail after a colon
(`operator_refused_credentials:http_403`) keeps the detail for the staff's logs; merchants
see the code before it.
"""

from __future__ import annotations

from typing import Any

FAILED = "failed"

GENERIC = "L'opération a échoué ; aucun motif précis n'a été donné."

_NOT_A_WALLET = "Le numéro n'est pas celui d'un compte Mobile Money actif chez cet opérateur."
_NO_FUNDS = "Le solde du compte Mobile Money est insuffisant."
_LIMIT = "Le compte Mobile Money a atteint une limite fixée par l'opérateur."
_NOT_APPROVED = "L'opération n'a pas été approuvée."
_BAD_AMOUNT = "Le montant est hors des limites que l'opérateur accepte."
_NOT_OFFERED = "Le prestataire de cet opérateur n'effectue pas ce type d'opération."
_OPERATOR_ERROR = "L'opérateur a rencontré une erreur et n'a pas effectué l'opération."

MESSAGES: dict[str, str] = {
    # The service's own reasons.
    "operator_unavailable": "L'opérateur était indisponible : l'opération n'a pas été faite.",
    "approval_rejected": _NOT_APPROVED,
    "card_payment_expired": "Le paiement par carte n'a pas été réglé à temps ; il a expiré.",
    "expired": "L'opération a expiré avant d'être confirmée.",
    "plan_not_actively_pending": "Le plan n'accepte plus de versement ; rien n'a été débité.",
    "test_helper": "Échec décidé par l'aide de test.",
    # The test-mode simulator (DESIGN: Test mode).
    "refused_at_initiation": "L'opérateur a refusé l'opération dès la demande.",
    "refused_after_initiation": "L'opérateur a refusé l'opération après l'avoir prise en charge.",
    # Connectors: the platform's setup with a provider.
    "operator_refused_credentials": "Le prestataire a refusé les identifiants de la plateforme ; "
    "l'opération n'a pas été faite. Le support en est informé par ses journaux.",
    "operator_not_carried": "Le prestataire utilisé ne prend pas en charge cet opérateur.",
    "orange_url_refused": "Orange Money n'accepte pas l'adresse de retour ou de notification "
    "(absente ou trop longue) ; rien n'a été débité.",
    "orange_webpay_collects_only": _NOT_OFFERED,
    "cinetpay_transfers_not_configured": _NOT_OFFERED,
    "cinetpay_refunds_not_offered": "Le prestataire de cet opérateur ne rembourse pas.",
    "cinetpay_amount_not_multiple_of_5": "CinetPay n'accepte que des montants multiples de 5.",
    "session_not_found": "Le paiement est introuvable chez l'opérateur.",
    "partial_refund_not_offered": "Cet opérateur ne rembourse un paiement qu'en entier, "
    "commission comprise ; rien n'a été envoyé.",
    "transaction_not_found": "L'opération est introuvable chez l'opérateur.",
    # Operators' answers about the customer's or beneficiary's account.
    "payer_not_found": _NOT_A_WALLET,
    "payee_not_found": _NOT_A_WALLET,
    "recipient_not_found": _NOT_A_WALLET,
    "invalid_party": _NOT_A_WALLET,
    "invalid_phone_number": "Le numéro de téléphone n'est pas valide pour cet opérateur.",
    "not_enough_funds": _NO_FUNDS,
    "insufficient_funds": _NO_FUNDS,
    "insufficient_balance": _NO_FUNDS,
    "payer_limit_reached": _LIMIT,
    "recipient_limit_exceeded": _LIMIT,
    "wallet_limit_reached": _LIMIT,
    "blocked_account": "Le compte Mobile Money est bloqué.",
    "recipient_not_allowed_to_receive": "Le compte Mobile Money ne peut pas recevoir d'argent.",
    "payment_not_approved": "Le client n'a pas validé le paiement sur son téléphone.",
    "cancelled": "L'opération a été annulée.",
    "manually_cancelled": "L'opérateur a annulé l'opération.",
    "payout_reversed": "L'opérateur a annulé le transfert après l'avoir effectué.",
    "amount_out_of_bounds": _BAD_AMOUNT,
    "amount_too_small": _BAD_AMOUNT,
    "amount_too_large": _BAD_AMOUNT,
    "invalid_amount": _BAD_AMOUNT,
    "provider_temporarily_unavailable": "L'opérateur était momentanément indisponible.",
    "internal_processing_error": _OPERATOR_ERROR,
    "unknown_error": _OPERATOR_ERROR,
    "other_error": _OPERATOR_ERROR,
}


def failure_code(reason: str | None) -> str | None:
    if reason is None:
        return None
    return reason.split(":", 1)[0] or None


def failure_message(code: str | None) -> str:
    return MESSAGES.get(code, GENERIC) if code is not None else GENERIC


def failure_fields(status: str, reason: str | None) -> dict[str, Any]:
    """`failure_code` and `failure_message` of a resource: null unless it failed."""
    if status != FAILED:
        return {"failure_code": None, "failure_message": None}
    code = failure_code(reason)
    return {"failure_code": code, "failure_message": failure_message(code)}
