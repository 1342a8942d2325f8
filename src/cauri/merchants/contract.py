"""An account's contract: which payment modes are open to it and at what fee."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import InvalidRequest
from cauri.kit.money import EXPONENT, fee_for
from cauri.operators.catalogue import PaymentMode
from cauri.operators.registry import OperatorRegistry

PAYOUT = "payout"


@dataclass(frozen=True)
class Terms:
    percent: Decimal
    fixed: int  # in major units of the currency the fee is charged in
    disabled: bool = False

    def fee(self, amount_minor: int, currency: str) -> int:
        return fee_for(amount_minor, self.percent, self.fixed * 10 ** EXPONENT[currency])


_TERMS = text(
    "SELECT coalesce(r.percent, CASE WHEN :mode = 'payout' THEN s.payout_fee_percent "
    "       ELSE s.fee_percent END, 0), "
    "       coalesce(r.fixed, CASE WHEN :mode = 'payout' THEN s.payout_fee_fixed "
    "       ELSE s.fee_fixed END, 0), "
    "       coalesce(r.disabled, false) "
    "FROM (SELECT 1) AS one "
    "LEFT JOIN platform_settings s ON s.id = 1 "
    "LEFT JOIN fee_rules r ON r.merchant_id = :merchant_id AND r.mode = :mode"
)

_ALL_TERMS = text(
    "SELECT m.mode, coalesce(r.percent, s.fee_percent, 0), coalesce(r.fixed, s.fee_fixed, 0), "
    "       coalesce(r.disabled, false) "
    "FROM unnest(CAST(:modes AS text[])) AS m(mode) "
    "LEFT JOIN platform_settings s ON s.id = 1 "
    "LEFT JOIN fee_rules r ON r.merchant_id = :merchant_id AND r.mode = m.mode"
)


async def terms_for(session: AsyncSession, merchant_id: str, mode: str) -> Terms:
    percent, fixed, disabled = (
        await session.execute(_TERMS, {"merchant_id": merchant_id, "mode": mode})
    ).one()
    return Terms(Decimal(percent), int(fixed), bool(disabled))


async def open_modes(
    session: AsyncSession,
    merchant_id: str,
    livemode: bool,
    modes: list[PaymentMode],
    operators: OperatorRegistry,
) -> list[tuple[PaymentMode, Terms]]:
    """The modes of `modes` open to the account in this environment, with its terms."""
    rows = await session.execute(
        _ALL_TERMS, {"merchant_id": merchant_id, "modes": [m.operator.lower() for m in modes]}
    )
    terms = {mode: Terms(Decimal(p), int(f), bool(d)) for mode, p, f, d in rows}
    return [
        (mode, terms[mode.operator.lower()])
        for mode in modes
        if not terms[mode.operator.lower()].disabled
        and operators.adapter(mode.operator, livemode) is not None
    ]


async def payment_terms(
    session: AsyncSession,
    merchant_id: str,
    livemode: bool,
    mode: PaymentMode,
    operators: OperatorRegistry,
) -> Terms:
    """The terms of one mode, or a 422 when the mode is not open to the account."""
    terms = await terms_for(session, merchant_id, mode.operator.lower())
    if terms.disabled or operators.adapter(mode.operator, livemode) is None:
        raise InvalidRequest.field(
            "operator", f"Le moyen de paiement {mode.operator} n'est pas ouvert sur ce compte."
        )
    return terms
