"""Which operator a phone number likely belongs to (`GET /payment-modes/predict`), from the
numbering plans of the seven countries: the `phonenumbers` library's carrier data, with
Cauri's own corrections where that data names carriers differently or misses the change of
Benin's numbers to ten digits. Pure: no network, no database.

A hint, never a fact: with number portability a customer may keep their number on another
operator, and wallets such as Wave live on any operator's number.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import phonenumbers
from phonenumbers import carrier

from cauri.kit import phone
from cauri.kit.errors import InvalidRequest

# The carrier names of phonenumbers' data, per country, as the catalogue's operator codes.
# A carrier with no Mobile Money in the catalogue (Expresso, Airtel Congo, …) maps to none.
CARRIERS: dict[str, dict[str, str]] = {
    "BJ": {"MTN": "mtn", "Moov": "moov", "Moov Africa": "moov", "Celtiis": "celtiis_bj"},
    "BF": {"Orange": "orange_bf", "Moov Africa": "moov_bf", "Moov": "moov_bf", "Telmob": "moov_bf"},
    "CI": {"MTN": "mtn_ci", "Moov": "moov_ci", "Moov Africa": "moov_ci", "Orange": "orange_ci"},
    "ML": {
        "Orange": "orange_ml",
        "Sotelma": "mobicash_ml",
        "Malitel": "mobicash_ml",
        "Moov Africa": "mobicash_ml",
    },
    "SN": {"Orange": "orange_sn", "Yas": "free_sn", "Free": "free_sn", "Tigo": "free_sn"},
    "TG": {
        "Togo Telecom": "togocom_tg",
        "Togocom": "togocom_tg",
        "Togocel": "togocom_tg",
        "Yas": "togocom_tg",
        "Moov": "moov_tg",
        "Moov Africa": "moov_tg",
    },
    "CG": {"MTN": "mtn_cg"},
}
# Wallets that any number can hold: never predicted, always possible.
WALLETS: dict[str, tuple[str, ...]] = {"BF": ("wave_bf",), "CI": ("wave_ci",), "SN": ("wave_sn",)}
# Benin's mobile numbers gained the prefix 01 in November 2024 (eight digits became ten);
# customers still give the old form.
BENIN_OLD_LENGTH, BENIN_NEW_PREFIX = 8, "01"
PORTABILITY_NOTE = (
    "Prédiction d'après le plan de numérotation : avec la portabilité des numéros, un client "
    "peut être chez un autre opérateur. À confirmer par le client."
)


class Confidence(StrEnum):
    HIGH = "high"  # the operator's own aggregator predicted it (pawaPay)
    MEDIUM = "medium"  # the numbering plan names an operator of the catalogue
    LOW = "low"  # no operator of the catalogue for this number


class Source(StrEnum):
    NUMBERING_PLAN = "numbering_plan"
    PAWAPAY = "pawapay"


@dataclass(frozen=True)
class Prediction:
    phone_number: str  # digits, with the country code
    country_code: str
    operator: str | None
    carrier: str | None  # the carrier the numbering plan names, as it names it
    confidence: Confidence
    source: Source
    wallets: tuple[str, ...]  # catalogue codes of wallets any number may hold


def country_of(digits: str) -> str | None:
    return next((c for c, dial in phone.DIAL_CODES.items() if digits.startswith(dial)), None)


def _as_dialled(digits: str, country: str) -> str:
    national = digits.removeprefix(phone.DIAL_CODES[country])
    if country == "BJ" and len(national) == BENIN_OLD_LENGTH:
        national = BENIN_NEW_PREFIX + national
    return "+" + phone.DIAL_CODES[country] + national


def predict(raw: str) -> Prediction:
    """The country and likely operator of a number; 422 when it is not a number of one of the
    seven countries."""
    digits = phone.normalize(raw, None)
    country = country_of(digits)
    if country is None:
        raise InvalidRequest.field(
            "phone_number",
            "Indicatif inconnu : les pays servis sont "
            + ", ".join(f"{c} (+{d})" for c, d in phone.DIAL_CODES.items())
            + ".",
        )
    number = phonenumbers.parse(_as_dialled(digits, country))
    name = carrier.name_for_number(number, "en") if phonenumbers.is_valid_number(number) else ""
    operator = CARRIERS[country].get(name)
    return Prediction(
        phone_number=digits,
        country_code=country,
        operator=operator,
        carrier=name or None,
        confidence=Confidence.MEDIUM if operator else Confidence.LOW,
        source=Source.NUMBERING_PLAN,
        wallets=WALLETS.get(country, ()),
    )
