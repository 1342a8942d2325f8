"""`cauri settings`: the platform's settings (`show`, `set`) and this process's effective
CAURI_* settings, secrets reduced to whether they are set."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit, urlunsplit

import typer

from cauri.cli.acting import AsOption, TotpOption, acting, held
from cauri.cli.common import FIXED_CURRENCY_HELP, in_transaction
from cauri.cli.output import JsonFlag, echo_json, echo_record
from cauri.config import Settings, get_settings
from cauri.kit.money import FIXED_FEE_CURRENCIES, to_major
from cauri.models import MoneyApproval, PlatformSettings
from cauri.platform.service import FIXED_SETTINGS, fixed_column
from cauri.staff import actions

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

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


settings_cli = typer.Typer(no_args_is_help=True, help="Platform-wide settings.")
settings_cli.command("show")(settings_show)


@settings_cli.command("set")
def settings_set(
    plan_creation_fee_fixed: Annotated[Decimal | None, typer.Option()] = None,
    plan_creation_fee_percent: Annotated[Decimal | None, typer.Option()] = None,
    plan_penalty_percent: Annotated[Decimal | None, typer.Option()] = None,
    fee_percent: Annotated[Decimal | None, typer.Option()] = None,
    fee_fixed: Annotated[Decimal | None, typer.Option()] = None,
    payout_fee_percent: Annotated[Decimal | None, typer.Option()] = None,
    payout_fee_fixed: Annotated[Decimal | None, typer.Option()] = None,
    payout_dual_approval_above: Annotated[
        Decimal | None,
        typer.Option(help="Held payouts above this amount need two people's approvals."),
    ] = None,
    unset: Annotated[
        list[str] | None,
        typer.Option(
            help="A setting to leave without a value (in --currency for an amount): "
            "payout-dual-approval-above (never two approvals), plan-creation-fee-fixed or "
            "-percent. Repeatable."
        ),
    ] = None,
    currency: Annotated[str, typer.Option(help=FIXED_CURRENCY_HELP)] = "XOF",
    as_email: AsOption = None,
    totp_code: TotpOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Changes the given settings; the others are kept. Raising or unsetting
    payout-dual-approval-above (where set) is only asked, on its own (--as and --totp
    required), and done on a second admin's approval (`cauri approvals approve`)."""
    given: dict[str, Decimal | None] = {
        key: value
        for key, value in {
            "plan_creation_fee_fixed": plan_creation_fee_fixed,
            "plan_creation_fee_percent": plan_creation_fee_percent,
            "plan_penalty_percent": plan_penalty_percent,
            "fee_percent": fee_percent,
            "fee_fixed": fee_fixed,
            "payout_fee_percent": payout_fee_percent,
            "payout_fee_fixed": payout_fee_fixed,
            "payout_dual_approval_above": payout_dual_approval_above,
        }.items()
        if value is not None
    }
    given |= {name.replace("-", "_"): None for name in unset or ()}

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        actor = await acting(session, runtime, as_email, totp_code)
        done = await actions.set_settings(session, runtime, actor, given, currency=currency.upper())
        return held(done) if isinstance(done, MoneyApproval) else platform_row(done)

    echo_record(in_transaction(work), as_json)
