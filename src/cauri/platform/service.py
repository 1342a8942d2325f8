"""Platform-wide settings (`cauri settings set`): default fees, plan creation fee, penalty,
the amount above which a payout needs two approvals."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.errors import InvalidRequest
from cauri.kit.money import FIXED_FEE_CURRENCIES, Currency, fixed_fee_currency, to_minor
from cauri.models import PlatformSettings

# Amounts, one column per currency (fixed_column); set in major units of a `currency`.
FIXED_SETTINGS = (
    "fee_fixed",
    "payout_fee_fixed",
    "plan_creation_fee_fixed",
    "payout_dual_approval_above",
)
PERCENT_SETTINGS = (
    "fee_percent",
    "payout_fee_percent",
    "plan_creation_fee_percent",
    "plan_penalty_percent",
)


def fixed_column(setting: str, currency: str) -> str:
    """The column of a fixed amount in a currency: `fee_fixed` (XOF and XAF), `fee_fixed_eur`."""
    in_currency = fixed_fee_currency(currency)
    return setting if in_currency == "XOF" else f"{setting}_{in_currency.lower()}"


def may_be_unset(setting: str) -> bool:
    """Whether the setting can have no value (never set: no dual approval, no plan creation
    fee of that kind); the others are amounts or percentages whose "none" is 0."""
    column = fixed_column(setting, "XOF") if setting in FIXED_SETTINGS else setting
    return bool(PlatformSettings.__table__.columns[column].nullable)


def _plan_creation_fixed_columns() -> list[str]:
    return [fixed_column("plan_creation_fee_fixed", c) for c in FIXED_FEE_CURRENCIES]


def check_currency(currency: str) -> None:
    if currency not in Currency.__members__:
        raise InvalidRequest.field("currency", f"Devise inconnue : {currency}.")


async def update_settings(
    session: AsyncSession, changes: dict[str, Any], now: datetime, *, currency: str = "XOF"
) -> PlatformSettings:
    """Applies the given changes; the fixed amounts among them are in major units of
    `currency`; None unsets a setting that may have no value (may_be_unset). The plan
    creation fee is fixed amounts or a percentage, never both: setting one clears the
    other, and asking for both is refused."""
    check_currency(currency)
    if (
        changes.get("plan_creation_fee_fixed") is not None
        and changes.get("plan_creation_fee_percent") is not None
    ):
        raise InvalidRequest(
            "Les frais de création d'un plan sont soit un montant fixe, soit un pourcentage."
        )
    values: dict[str, Any] = {}
    for key, value in changes.items():
        if key not in FIXED_SETTINGS + PERCENT_SETTINGS:
            raise InvalidRequest.field(key, f"Paramètre inconnu : {key}.")
        if value is None:
            if not may_be_unset(key):
                raise InvalidRequest.field(
                    key,
                    "Ce paramètre a toujours une valeur : donnez 0 pour n'appliquer aucuns frais.",
                )
            values[fixed_column(key, currency) if key in FIXED_SETTINGS else key] = None
            continue
        if isinstance(value, int | Decimal) and value < 0:
            raise InvalidRequest.field(key, "La valeur ne peut pas être négative.")
        if key.endswith("percent") and value is not None and value > 100:
            raise InvalidRequest.field(key, "Un pourcentage ne dépasse pas 100.")
        if key in FIXED_SETTINGS:
            values[fixed_column(key, currency)] = to_minor(value, currency, key)
        else:
            values[key] = value
    if any(values.get(column) is not None for column in _plan_creation_fixed_columns()):
        values["plan_creation_fee_percent"] = None
    if values.get("plan_creation_fee_percent") is not None:
        values |= dict.fromkeys(_plan_creation_fixed_columns())
    values["updated_at"] = now
    statement = (
        insert(PlatformSettings)
        .values(id=1, **values)
        .on_conflict_do_update(index_elements=[PlatformSettings.id], set_=values)
        .returning(PlatformSettings)
    )
    return (await session.scalars(statement)).one()
