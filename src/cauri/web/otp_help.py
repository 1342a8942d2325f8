"""How a customer gets the one-time code a mode asks for (issue 25: from the operator's public
documentation where it exists, else a plain instruction). No operator of the four publishes
the menu path in a document found so far (docs/OPERATORS.md, "One-time codes"): a menu path
that changed (Orange's USSD codes have) would send the customer astray, so each says where
to ask, never what to type."""

from __future__ import annotations

from cauri.operators import catalogue

# Where each mode's customer generates the code: its wallet's menu or application.
_WHERE = {
    "coris": "l'application Coris Money ou le menu Coris Money de votre téléphone",
    "orange_bf": "le menu Orange Money de votre téléphone ou l'application Orange Money",
    "wave_bf": "l'application Wave",
    "orange_sn": "le menu Orange Money de votre téléphone ou l'application Orange Money",
}


def otp_instructions(operator: str) -> str:
    mode = catalogue.find(operator)
    name = mode.name if mode else operator
    where = _WHERE.get(operator.lower(), f"le menu {name} de votre téléphone")
    return (
        f"Générez un code de paiement dans {where}, puis saisissez-le ici. Ce code n'est "
        "pas votre code secret : ne communiquez jamais votre code secret."
    )
