"""An account's contract: which payment modes are open to it and at what fee."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.connectors.registry import OperatorRegistry
from cauri.kit.errors import InvalidRequest
from cauri.kit.money import FIXED_FEE_CURRENCIES, fee_for, fixed_fee_currency, to_major
from cauri.kit.prepared import Prepared
from cauri.operators.catalogue import PaymentMode

PAYOUT = "payout"


class FeeBearer(StrEnum):
    """Who pays a payment's commission (DESIGN: fee bearer)."""

    CUSTOMER = "customer"  # debited amount + fee; the merchant is credited amount
    MERCHANT = "merchant"  # debited amount; the merchant is credited amount - fee


@dataclass(frozen=True)
class Terms:
    percent: Decimal
    # In minor units, by the currency fixed fees are set in (kit.money.FIXED_FEE_CURRENCIES).
    fixed: Mapping[str, int]
    disabled: bool = False
    fee_bearer: FeeBearer = FeeBearer.CUSTOMER

    def fixed_in(self, currency: str) -> int:
        return self.fixed.get(fixed_fee_currency(currency), 0)

    def fee(self, amount_minor: int, currency: str) -> int:
        return fee_for(amount_minor, self.percent, self.fixed_in(currency))

    def fixed_major(self, currency: str) -> int | float:
        return to_major(self.fixed_in(currency), currency)


# An account's rule for a mode is whole: when it exists, every part of it applies (its columns
# are never null); without one, the platform's defaults for payments or for payouts apply.
# `merchant` is the SQL of the account's id: a parameter, or a column of a query around it
# (Cauri's own SQL, never a caller's text).
def terms_sql(merchant: str) -> str:
    return (
        "SELECT m.mode, coalesce(r.percent, d.percent, 0), coalesce(r.fixed, d.xof, 0), "  # noqa: S608
        "       coalesce(r.fixed_eur, d.eur, 0), coalesce(r.fixed_usd, d.usd, 0), "
        "       coalesce(r.disabled, false), "
        f"       (SELECT fee_bearer FROM merchants WHERE id = {merchant}) "
        "FROM unnest(CAST(:modes AS text[])) AS m(mode) "
        "LEFT JOIN (platform_settings s CROSS JOIN LATERAL (VALUES "
        "  ('payment', s.fee_percent, s.fee_fixed, s.fee_fixed_eur, s.fee_fixed_usd), "
        "  ('payout', s.payout_fee_percent, s.payout_fee_fixed, s.payout_fee_fixed_eur, "
        "   s.payout_fee_fixed_usd)) AS d(kind, percent, xof, eur, usd)) "
        "  ON s.id = 1 AND d.kind = CASE WHEN m.mode = 'payout' THEN 'payout' ELSE 'payment' END "
        f"LEFT JOIN fee_rules r ON r.merchant_id = {merchant} AND r.mode = m.mode"
    )


_TERMS = Prepared(text(terms_sql(":merchant_id")))
# Terms read along with something else in the request (merchants.auth), kept for its session.
_READ_AHEAD = "cauri.contract.read_ahead"


def parsed_terms(rows: Iterable[Sequence[Any]]) -> dict[str, Terms]:
    """The rows of `terms_sql`, by mode."""
    return {
        mode: Terms(
            Decimal(percent),
            dict(zip(FIXED_FEE_CURRENCIES, (int(xof), int(eur), int(usd)), strict=True)),
            bool(disabled),
            FeeBearer(bearer or FeeBearer.CUSTOMER),
        )
        for mode, percent, xof, eur, usd, disabled, bearer in rows
    }


def read_ahead(session: AsyncSession, merchant_id: str, terms: Mapping[str, Terms]) -> None:
    """Terms read in the request before they are needed, so that `read_terms` does not
    read them again; the request's session holds them, so they are never older than it."""
    session.info[_READ_AHEAD] = {(merchant_id, mode): t for mode, t in terms.items()}


async def _terms(session: AsyncSession, merchant_id: str, modes: list[str]) -> dict[str, Terms]:
    return parsed_terms(await _TERMS.fetch(session, {"merchant_id": merchant_id, "modes": modes}))


async def terms_for(session: AsyncSession, merchant_id: str, mode: str) -> Terms:
    return (await _terms(session, merchant_id, [mode]))[mode]


async def read_terms(session: AsyncSession, merchant_id: str, mode: str) -> Terms:
    """`terms_for`, taken from the request's session when they were read with its key
    (`read_ahead`)."""
    ahead: dict[tuple[str, str], Terms] = session.info.pop(_READ_AHEAD, {})
    key = (merchant_id, mode)
    return ahead[key] if key in ahead else await terms_for(session, merchant_id, mode)


async def open_modes(
    session: AsyncSession,
    merchant_id: str,
    livemode: bool,
    modes: list[PaymentMode],
    operators: OperatorRegistry,
) -> list[tuple[PaymentMode, Terms]]:
    """The modes of `modes` open to the account in this environment, with its terms."""
    terms = await _terms(session, merchant_id, [m.operator.lower() for m in modes])
    routed = await operators.routed(session, "collect", livemode)
    return [
        (mode, terms[mode.operator.lower()])
        for mode in modes
        if not terms[mode.operator.lower()].disabled and mode.operator.lower() in routed
    ]


async def payment_terms(
    session: AsyncSession,
    merchant_id: str,
    livemode: bool,
    mode: PaymentMode,
    operators: OperatorRegistry,
) -> Terms:
    """The terms of one mode, or a 422 when the mode is not open to the account."""
    terms = await read_terms(session, merchant_id, mode.operator.lower())
    if terms.disabled or await operators.route(session, mode.operator, "collect", livemode) is None:
        raise InvalidRequest.field(
            "operator", f"Le moyen de paiement {mode.operator} n'est pas ouvert sur ce compte."
        )
    return terms
