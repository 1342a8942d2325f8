"""How the API's status values read in a French sentence: messages are written for people,
and "Le paiement est déjà succeeded" is not French. The values themselves stay English in
every object and event (spec)."""

from __future__ import annotations

# Masculine, as le paiement, le transfert, le remboursement; a sentence about a feminine
# subject says "(statut : …)" instead.
_STATUS_WORDS = {
    "pending": "en attente",
    "succeeded": "réussi",
    "failed": "échoué",
    "refunded": "remboursé",
    "success": "livré",
}


def status_word(status: str) -> str:
    return _STATUS_WORDS.get(status, status)
