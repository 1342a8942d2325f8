"""The customer's language on Cauri's pages (issue 25): French unless the browser prefers
English (`Accept-Language`). Pages are written in French; `t` gives a sentence's English,
keyed by the French, so that a sentence missing here shows in French rather than not at
all. What the service refuses (a field's error, an operator's failure) is French, with
the field's English hint beside it (FIELD_HINTS)."""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request

FRENCH, ENGLISH = "fr", "en"

ENGLISH_TEXT: dict[str, str] = {
    "Paiement": "Payment",
    "Paiement à %s": "Payment to %s",
    "paiement sécurisé": "secure payment",
    "Une question ? Écrivez à": "A question? Write to",
    "Mode test": "Test mode",
    "aucun argent ne circule.": "no money moves.",
    "Plan de paiement : %s payés sur %s.": "Installment plan: %s paid of %s.",
    "Pays": "Country",
    "Afficher": "Show",
    "Choisissez comment payer": "Choose how to pay",
    "Objet": "For",
    "Commande": "Order",
    "Titulaire": "Cardholder",
    "Ce paiement est %s.": "This payment is %s.",
    "en attente": "pending",
    "réussi": "successful",
    "refusé": "refused",
    "remboursé": "refunded",
    "Le paiement par carte n'est pas encore disponible sur ce service. Aucune somme n'a été "
    "débitée.": "Card payment is not available on this service yet. Nothing was debited.",
    "aucune carte n'est débitée.": "no card is debited.",
    "cette page joue celle de %s ; aucun argent ne circule.": (
        "this page plays %s's; no money moves."
    ),
    "Choisissez l'issue du paiement.": "Choose the payment's outcome.",
    "Issue du paiement de test": "Outcome of the test payment",
    "Refuser le paiement": "Refuse the payment",
    "Votre numéro (facultatif)": "Your number (optional)",
    "Trouver mon opérateur": "Find my operator",
    "Probablement :": "Likely:",
    "Avec la portabilité des numéros, vérifiez votre opérateur.": (
        "With number portability, check your operator."
    ),
    "Aucun moyen de paiement n'est disponible pour le moment. Réessayez plus tard ou "
    "contactez le marchand.": "No payment method is available right now. Try again later "
    "or contact the merchant.",
    "Montant débité": "Amount debited",
    "Montant": "Amount",
    "Frais": "Fee",
    "Total débité": "Total debited",
    "Total": "Total",
    "Vérifiez les champs signalés.": "Please check the fields marked.",
    "Paiement par %s": "Payment by %s",
    "Numéro %s": "%s number",
    "Avec ou sans l'indicatif +%s.": "With or without the +%s country code.",
    "Code de paiement": "Payment code",
    "Prénom du titulaire": "Cardholder's first name",
    "Nom du titulaire": "Cardholder's last name",
    "E-mail": "Email",
    "Montant du versement (%s)": "Instalment amount (%s)",
    "Montant (%s)": "Amount (%s)",
    "Entre %s et %s.": "Between %s and %s.",
    "Au moins %s.": "At least %s.",
    "Au plus %s.": "At most %s.",
    "Le montant que vous payez.": "The amount you pay.",
    "Payer": "Pay",
    "Payer %s": "Pay %s",
    "Continuer": "Continue",
    "Numéros de test (les 4 derniers chiffres décident) :": "Test numbers (the last 4 digits "
    "decide):",
    "…0000 : réussi aussitôt": "…0000: succeeds at once",
    "…0001 : refusé aussitôt": "…0001: refused at once",
    "…0003 : refusé après attente": "…0003: refused after a wait",
    "autre : réussi après attente": "other: succeeds after a wait",
    "Changer de moyen de paiement": "Change payment method",
    "Validez le paiement sur votre téléphone": "Approve the payment on your phone",
    "Cette page se met à jour toute seule. Si rien n'arrive sur votre téléphone, vous pouvez "
    "essayer autrement.": "This page updates by itself. If nothing reaches your phone, you "
    "can try another way.",
    "Paiement réussi. Merci !": "Payment successful. Thank you!",
    "Cette commande était déjà payée ou close : ce paiement vous est remboursé en entier.": (
        "This order was already paid or closed: this payment is refunded to you in full."
    ),
    "Le paiement a échoué.": "The payment failed.",
    "Détail du paiement": "Payment details",
    "Référence": "Reference",
    "Moyen de paiement": "Payment method",
    "Numéro": "Number",
    "Vous allez revenir sur le site du marchand dans quelques secondes.": (
        "You will be taken back to the merchant's site in a few seconds."
    ),
    "Retourner sur le site de %s": "Back to %s",
    "Retourner sur le site du marchand": "Back to the merchant's site",
    "Essayer autrement": "Try another way",
    "Réessayer": "Try again",
    "Contactez le marchand pour payer autrement.": "Contact the merchant to pay another way.",
    "Cette commande est payée.": "This order is paid.",
    "Cette page de paiement a expiré. Demandez un nouveau lien au marchand.": (
        "This payment page has expired. Ask the merchant for a new link."
    ),
    "Ce lien de paiement n'est plus actif. Contactez le marchand.": (
        "This payment link is no longer active. Contact the merchant."
    ),
    "Trop de tentatives de paiement pour cette commande. Contactez le marchand pour payer "
    "autrement.": "Too many payment attempts for this order. Contact the merchant to pay "
    "another way.",
    "Le formulaire a expiré : vérifiez et envoyez-le de nouveau.": (
        "The form has expired: check it and send it again."
    ),
}
OTP_HINT = (
    "Generate a payment code in your wallet's app or menu, then enter it here. This code is "
    "not your PIN: never share your PIN."
)

# What each field wants, in English, shown beside the service's French refusal.
FIELD_HINTS: dict[str, str] = {
    "phone_number": "Enter the mobile number of this operator's country.",
    "otp": "Enter the payment code generated in your wallet.",
    "amount": "Enter an amount in figures, within the bounds shown.",
    "firstname": "Enter the cardholder's first name.",
    "lastname": "Enter the cardholder's last name.",
    "email": "Enter a valid email address.",
}


def language_of(request: Request) -> str:
    """English when the browser ranks it above French, else French (Accept-Language's
    q-values; a language without one counts 1)."""
    ranked: dict[str, float] = {}
    for part in request.headers.get("accept-language", "").split(","):
        tag, _, params = part.strip().partition(";")
        base = tag.strip().lower().split("-")[0]
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        if base in (FRENCH, ENGLISH):
            ranked[base] = max(ranked.get(base, 0.0), quality)
    return ENGLISH if ranked.get(ENGLISH, 0.0) > ranked.get(FRENCH, 0.0) else FRENCH


def _english(french: str) -> str:
    return ENGLISH_TEXT.get(french, french)


def _french(french: str) -> str:
    return french


def translator(language: str) -> Callable[[str], str]:
    return _english if language == ENGLISH else _french
