"""The operator rules every payment and instalment obeys before an operator is engaged
(spec: Operators, countries and numbers, rules 1–5; Cards)."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.kit import phone
from cauri.kit.errors import InvalidRequest
from cauri.kit.money import EXPONENT, format_major, to_minor
from cauri.merchants.contract import FeeBearer, Terms
from cauri.operators import catalogue
from cauri.operators.catalogue import PaymentMode
from cauri.payments.schemas import PaymentFields

MOBILE_MONEY_MIN = 10
MOBILE_MONEY_MAX = 1_000_000


@dataclass(frozen=True)
class CheckedPayment:
    mode: PaymentMode
    amount: int
    currency: str
    phone_number: str | None


def resolve_mode(body: PaymentFields) -> PaymentMode:
    mode = catalogue.find(body.operator)
    if mode is None:
        raise InvalidRequest.field("operator", f"Opérateur inconnu : {body.operator}.")
    return mode


def check(body: PaymentFields, mode: PaymentMode) -> CheckedPayment:
    """Shape rules that need no database: currency, amount precision, identity, number."""
    currency = body.currency.value if body.currency else mode.currency
    amount = to_minor(body.amount, currency)
    if mode.is_card:
        _check_card(body)
        return CheckedPayment(mode, amount, currency, None)
    if mode.country_code and mode.currency != currency:
        raise InvalidRequest.field(
            "currency", f"{mode.operator} encaisse en {mode.currency}, pas en {currency}."
        )
    if body.phone_number is None:
        raise InvalidRequest.field("phone_number", "Le numéro de téléphone est obligatoire.")
    number = phone.normalize(body.phone_number, mode.country_code)
    if mode.requires_otp and not body.otp:
        raise InvalidRequest.field(
            "otp", f"{mode.operator} exige un code à usage unique (otp) fourni par le client."
        )
    if mode.requires_return_url and not body.return_url:
        raise InvalidRequest.field(
            "return_url", f"{mode.operator} exige return_url, la page de retour du client."
        )
    return CheckedPayment(mode, amount, currency, number)


def check_return_url(return_url: str | None, *, livemode: bool) -> None:
    """A live customer is sent back over https only; test mode also accepts http, for the
    developers' own pages (http://localhost:3000/merci)."""
    if livemode and return_url is not None and not return_url.startswith("https://"):
        raise InvalidRequest.field(
            "return_url", "En mode live, return_url doit commencer par https://."
        )


def _check_card(body: PaymentFields) -> None:
    if body.phone_number is not None:
        raise InvalidRequest.field(
            "phone_number", "Un paiement par carte ne porte pas de numéro de téléphone."
        )
    missing = {
        f"customer.{name}": ["Obligatoire pour un paiement par carte."]
        for name in ("firstname", "lastname", "email")
        if not getattr(body.customer, name)
    }
    if missing:
        raise InvalidRequest("L'identité du titulaire de la carte est incomplète.", missing)


def debited(amount: int, fee: int, bearer: FeeBearer) -> int:
    """What the customer is debited for `amount` with commission `fee`."""
    return amount + fee if bearer is FeeBearer.CUSTOMER else amount


def fee_within_bounds(checked: CheckedPayment, terms: Terms, bearer: FeeBearer) -> int:
    """The commission. When the merchant bears it, it must leave them something; for Mobile
    Money the total debited must lie in 10..1,000,000."""
    fee = terms.fee(checked.amount, checked.currency)
    if bearer is FeeBearer.MERCHANT and fee >= checked.amount:
        raise InvalidRequest.field(
            "amount",
            f"Le montant doit dépasser la commission ({format_major(fee, checked.currency)}), "
            "à la charge du marchand sur ce compte.",
        )
    if checked.mode.is_card:
        return fee
    total = debited(checked.amount, fee, bearer)
    unit = 10 ** EXPONENT[checked.currency]
    if not MOBILE_MONEY_MIN * unit <= total <= MOBILE_MONEY_MAX * unit:
        raise InvalidRequest.field(
            "amount",
            f"Le total débité ({format_major(total, checked.currency)}, commission comprise) "
            f"doit être compris entre {MOBILE_MONEY_MIN} et {MOBILE_MONEY_MAX}.",
        )
    return fee
