"""`cauri settings show`: the platform's settings (what `settings set` changes) and this
process's effective CAURI_* settings, secrets reduced to whether they are set."""

from __future__ import annotations

from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.cli.output import JsonFlag, echo_json, in_transaction
from cauri.config import Settings, get_settings
from cauri.kit.money import FIXED_FEE_CURRENCIES, to_major
from cauri.models import PlatformSettings
from cauri.platform.service import FIXED_SETTINGS, fixed_column
from cauri.runtime import Runtime

_PERCENTS = (
    "plan_creation_fee_percent",
    "plan_penalty_percent",
    "fee_percent",
    "payout_fee_percent",
)
# A setting whose name ends so is a secret: only whether it is set is shown.
_SECRET_SUFFIXES = ("_key", "_keys", "_token", "_secret", "_password")


def platform_row(row: PlatformSettings | None) -> dict[str, Any]:
    """Percentages, then fixed amounts in major units of their currency (`fee_fixed` in XOF,
    `fee_fixed_eur`…). With no row (`settings set` never run), the columns' defaults: a
    column that cannot be null defaults to 0, one that can (the plan creation fee) is unset."""
    table = PlatformSettings.__mapper__.columns

    def stored(column: str) -> Any:
        value = None if row is None else getattr(row, column)
        return 0 if value is None and not table[column].nullable else value

    shown: dict[str, Any] = {
        column: None if value is None else float(Decimal(value))
        for column in _PERCENTS
        for value in [stored(column)]
    }
    for setting in FIXED_SETTINGS:
        for currency in FIXED_FEE_CURRENCIES:
            column = fixed_column(setting, currency)
            amount = stored(column)
            shown[column] = None if amount is None else to_major(amount, currency)
    return shown


def runtime_settings(settings: Settings) -> dict[str, Any]:
    """Every CAURI_* setting by its variable's name, as this process reads it."""
    return {
        f"CAURI_{name.upper()}": _shown(name, getattr(settings, name))
        for name in type(settings).model_fields
    }


def _shown(name: str, value: Any) -> Any:
    if name.endswith(_SECRET_SUFFIXES):
        return "not set" if not value else "set"  # None, or no previous key ("")
    if isinstance(value, str) and name.endswith("_url"):
        return _without_password(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _without_password(url: str) -> str:
    """`postgresql://cauri:***@db/cauri`: the password says only that there is one."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def settings_show(as_json: JsonFlag = False) -> None:
    """The platform's settings, then the effective CAURI_* settings (secrets: set or not)."""

    async def work(session: AsyncSession, _: Runtime) -> dict[str, Any]:
        row = await session.get(PlatformSettings, 1)
        return {
            "platform": platform_row(row)
            | {"updated_at": row and row.updated_at and row.updated_at.isoformat()},
            # Read after the database was resolved: the embedded one's address, if used.
            "runtime": runtime_settings(get_settings()),
        }

    shown = in_transaction(work)
    if as_json:
        echo_json(shown)
        return
    for section, values in shown.items():
        typer.echo(f"{section}:")
        for key, value in values.items():
            typer.echo(f"  {key}: {'-' if value is None else value}")
