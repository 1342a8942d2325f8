"""The kinds of discrepancy a reconciliation run records (cauri.reconciliation.matching),
with what finance reads of each."""

from __future__ import annotations

from enum import StrEnum


class DiscrepancyKind(StrEnum):
    MISSING_AT_CAURI = "missing_at_cauri"
    MISSING_AT_OPERATOR = "missing_at_operator"
    AMOUNT_DIFFERS = "amount_differs"
    CURRENCY_DIFFERS = "currency_differs"
    STATUS_DIFFERS = "status_differs"
    DUPLICATE_AT_OPERATOR = "duplicate_at_operator"
    FEE_TAKEN = "fee_taken"
    LEDGER_DIFFERS = "ledger_differs"
    BALANCE_DIFFERS = "balance_differs"


LABELS: dict[str, str] = {
    DiscrepancyKind.MISSING_AT_CAURI: "Absente chez Cauri",
    DiscrepancyKind.MISSING_AT_OPERATOR: "Absente du relevé de l'opérateur",
    DiscrepancyKind.AMOUNT_DIFFERS: "Montant différent",
    DiscrepancyKind.CURRENCY_DIFFERS: "Devise différente",
    DiscrepancyKind.STATUS_DIFFERS: "Statut différent",
    DiscrepancyKind.DUPLICATE_AT_OPERATOR: "En double chez l'opérateur",
    DiscrepancyKind.FEE_TAKEN: "Frais prélevés par l'opérateur",
    DiscrepancyKind.LEDGER_DIFFERS: "Réussie sans l'écriture attendue au grand livre",
    DiscrepancyKind.BALANCE_DIFFERS: "Solde du portefeuille différent en fin de journée",
}
