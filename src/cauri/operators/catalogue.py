"""What the platform supports (spec: Operators, countries and numbers; Payment mode)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ModeType(StrEnum):
    MOBILE_MONEY = "mobile_money"
    CARD = "card"
    BANK_TRANSFER = "bank_transfer"
    E_WALLET = "e_wallet"


COUNTRY_NAMES: dict[str, str] = {
    "BJ": "Bénin",
    "BF": "Burkina Faso",
    "CI": "Côte d'Ivoire",
    "ML": "Mali",
    "SN": "Sénégal",
    "TG": "Togo",
    "CG": "Congo",
}

# Mobile Money is collected in the currency of the operator's country.
COUNTRY_CURRENCY: dict[str, str] = {code: "XOF" for code in COUNTRY_NAMES} | {"CG": "XAF"}


@dataclass(frozen=True)
class PaymentMode:
    id: int
    name: str
    type: ModeType
    operator: str
    country_code: str | None
    requires_otp: bool = False
    # free_sn sends the customer to a page and back (spec: Operators rule 2).
    requires_return_url: bool = False

    @property
    def country(self) -> str | None:
        return COUNTRY_NAMES[self.country_code] if self.country_code else None

    @property
    def currency(self) -> str:
        """What the mode collects and pays in when a request names no currency (DESIGN)."""
        return COUNTRY_CURRENCY[self.country_code] if self.country_code else "XOF"

    @property
    def is_card(self) -> bool:
        return self.type is ModeType.CARD


def _momo(
    id: int, name: str, operator: str, country: str, otp: bool = False, return_url: bool = False
) -> PaymentMode:
    return PaymentMode(id, name, ModeType.MOBILE_MONEY, operator, country, otp, return_url)


CATALOGUE: tuple[PaymentMode, ...] = (
    _momo(1, "MTN Mobile Money Bénin", "mtn", "BJ"),
    _momo(2, "Moov Money Bénin", "moov", "BJ"),
    _momo(3, "Celtiis Cash Bénin", "celtiis_bj", "BJ"),
    _momo(4, "Coris Money Bénin", "coris", "BJ", otp=True),
    _momo(5, "Moov Money Burkina Faso", "moov_bf", "BF"),
    _momo(6, "Orange Money Burkina Faso", "orange_bf", "BF", otp=True),
    _momo(7, "Wave Burkina Faso", "wave_bf", "BF", otp=True),
    _momo(8, "MTN Mobile Money Côte d'Ivoire", "mtn_ci", "CI"),
    _momo(9, "Moov Money Côte d'Ivoire", "moov_ci", "CI"),
    _momo(10, "Orange Money Côte d'Ivoire", "orange_ci", "CI"),
    _momo(11, "Wave Côte d'Ivoire", "wave_ci", "CI"),
    _momo(12, "Orange Money Mali", "orange_ml", "ML"),
    _momo(13, "Mobicash Mali", "mobicash_ml", "ML"),
    _momo(14, "Orange Money Sénégal", "orange_sn", "SN", otp=True),
    _momo(15, "Free Money Sénégal", "free_sn", "SN", return_url=True),
    _momo(16, "Wave Sénégal", "wave_sn", "SN"),
    _momo(17, "T-Money Togo", "togocom_tg", "TG"),
    _momo(18, "Moov Money Togo", "moov_tg", "TG"),
    _momo(19, "MTN Mobile Money Congo", "mtn_cg", "CG"),
    PaymentMode(20, "Carte VISA", ModeType.CARD, "VISA", None),
    PaymentMode(21, "Carte MASTERCARD", ModeType.CARD, "MASTERCARD", None),
)

_BY_OPERATOR = {mode.operator.lower(): mode for mode in CATALOGUE}


def find(operator: str) -> PaymentMode | None:
    """Operator codes are case-insensitive (`MTN` is `mtn`)."""
    return _BY_OPERATOR.get(operator.strip().lower())


def filtered(type_: ModeType | None, country_code: str | None) -> list[PaymentMode]:
    return [
        mode
        for mode in CATALOGUE
        if (type_ is None or mode.type is type_)
        and (country_code is None or mode.country_code == country_code)
    ]
